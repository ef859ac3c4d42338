package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// platforms are the release's, in the order of its file names: the four, or those PLATFORMS
// (os/arch, as deploy/release.sh takes them) names.
var platforms = func() []string {
	ps := strings.Fields(strings.ReplaceAll(os.Getenv("PLATFORMS"), "/", "_"))
	if len(ps) == 0 {
		return []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64"}
	}
	slices.Sort(ps)
	return ps
}()

// repo is the repository's root (this package is test/release).
func repo(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr)
	}
	return string(out)
}

// release runs deploy/release.sh into a new directory and returns it.
func release(t *testing.T, root string) string {
	t.Helper()
	dist := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command(filepath.Join(root, "deploy", "release.sh"), dist)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/release.sh: %v\n%s", err, out)
	}
	return dist
}

func TestRelease(t *testing.T) {
	if os.Getenv("SLUICE_RELEASE_TEST") == "" {
		t.Skip("builds the release twice: make test-release (CI) runs it")
	}
	if os.Getenv("CYCLONEDX") == "" {
		t.Fatal("CYCLONEDX is not set: make test-release builds cyclonedx-gomod (tools/cyclonedx) and sets it")
	}
	root := repo(t)
	commit := strings.TrimSpace(run(t, root, "git", "rev-parse", "HEAD"))
	epoch, err := strconv.ParseInt(strings.TrimSpace(run(t, root, "git", "log", "-1", "--format=%ct", "HEAD")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	modified := strings.TrimSpace(run(t, root, "git", "status", "--porcelain")) != ""

	a, b := release(t, root), release(t, root)
	sumsA, err := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sumsB, err := os.ReadFile(filepath.Join(b, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if string(sumsA) != string(sumsB) {
		t.Errorf("two builds of %s differ:\n%s\n%s", commit, sumsA, sumsB)
	}
	files := checkSums(t, a, sumsA)
	if len(files) != 2*len(platforms) {
		t.Fatalf("got %d files in SHA256SUMS (%v), want a tarball and an SBOM for each of %v", len(files), files, platforms)
	}
	for _, p := range platforms {
		tgz, sbom := named(files, "_"+p+".tar.gz"), named(files, "_"+p+".cdx.json")
		if tgz == "" || sbom == "" {
			t.Fatalf("got %v, want the tarball and the SBOM of %s", files, p)
		}
		t.Run(p, func(t *testing.T) {
			bin := unpack(t, filepath.Join(a, tgz), epoch)
			checkSBOM(t, bin, filepath.Join(a, sbom))
			if p == hostPlatform() {
				checkVersion(t, bin, commit, epoch, modified)
			}
		})
	}
}

// named is the one of files that ends in suffix ("" if none).
func named(files []string, suffix string) string {
	for _, f := range files {
		if strings.HasSuffix(f, suffix) {
			return f
		}
	}
	return ""
}

// checkSums verifies every line of sums against the files in dir, as sha256sum -c does, and
// returns the files it names, in its order.
func checkSums(t *testing.T, dir string, sums []byte) []string {
	t.Helper()
	var files []string
	sc := bufio.NewScanner(strings.NewReader(string(sums)))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not \"sum  name\"", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: got sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		files = append(files, name)
	}
	return files
}

// unpack extracts the tarball's binary into a temporary directory, checking that the archive
// is reproducible: sorted names under one directory, owner 0, the commit's time, no gzip name
// or time.
func unpack(t *testing.T, path string, epoch int64) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header: got name %q time %v, want neither (gzip -n)", zr.Name, zr.ModTime)
	}
	top := strings.TrimSuffix(filepath.Base(path), ".tar.gz")
	bin := filepath.Join(t.TempDir(), "sluice")
	var names []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != epoch {
			t.Errorf("%s: got uid %d gid %d mtime %v, want 0 0 %v", h.Name, h.Uid, h.Gid, h.ModTime.UTC(), time.Unix(epoch, 0).UTC())
		}
		if h.Name == top+"/sluice" {
			if h.Mode != 0o755 {
				t.Errorf("sluice: got mode %o, want 755", h.Mode)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{top + "/", top + "/LICENSE", top + "/README.md", top + "/sluice"}
	if !slices.Equal(names, want) {
		t.Fatalf("got entries %v, want %v", names, want)
	}
	return bin
}

// checkSBOM checks that the SBOM names the binary's main module and every module the
// toolchain recorded as linked into it (go version -m: its dep lines, a replacement's
// target in place of what it replaces).
func checkSBOM(t *testing.T, bin, path string) {
	t.Helper()
	var deps []string
	main := ""
	for _, line := range strings.Split(run(t, ".", "go", "version", "-m", bin), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			main = f[1]
		case len(f) >= 3 && f[0] == "dep":
			deps = append(deps, f[1]+"@"+f[2])
		case len(f) >= 3 && f[0] == "=>" && len(deps) > 0:
			deps[len(deps)-1] = f[1] + "@" + f[2]
		}
	}
	if main == "" || len(deps) < 10 {
		t.Fatalf("go version -m %s: main module %q, %d modules: want the gateway's", bin, main, len(deps))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name string } `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != main {
		t.Errorf("got format %q for %q, want a CycloneDX SBOM of %s", bom.BOMFormat, bom.Metadata.Component.Name, main)
	}
	listed := map[string]bool{}
	for _, c := range bom.Components {
		listed[c.Name+"@"+c.Version] = true
	}
	for _, d := range deps {
		if !listed[d] {
			t.Errorf("the SBOM does not name %s, which the binary links", d)
		}
	}
}

// checkVersion runs the binary's `--version` and `version`: both name the commit, its time
// and whether the tree had changes.
func checkVersion(t *testing.T, bin, commit string, epoch int64, modified bool) {
	t.Helper()
	for _, arg := range []string{"--version", "version"} {
		out := run(t, ".", bin, arg)
		for _, want := range []string{"sluice v", "commit:   " + commit + "\n", "modified: " + strconv.FormatBool(modified) + "\n",
			"built:    " + time.Unix(epoch, 0).UTC().Format(time.RFC3339) + "\n", "go:       go1."} {
			if !strings.Contains(out, want) {
				t.Errorf("sluice %s: got %q, want it to hold %q", arg, out, want)
			}
		}
		if strings.Contains(out, "unknown") {
			t.Errorf("sluice %s: got %q, want no unknown in a release", arg, out)
		}
	}
}

// hostPlatform is the release platform this machine runs ("" if none).
func hostPlatform() string {
	p := runtime.GOOS + "_" + runtime.GOARCH
	if slices.Contains(platforms, p) {
		return p
	}
	return ""
}
