#!/usr/bin/env bash
# The release of the commit checked out (make release): for linux and darwin on amd64 and
# arm64, a static binary `sluice` (no cgo, -trimpath, -buildvcs=true: it names its commit),
# a tarball with it, LICENSE and README.md, and a CycloneDX SBOM of the modules linked into it;
# SHA256SUMS of all of them.
#
#   deploy/release.sh [DIST]    DIST (default dist/) is emptied first
#
# Reproducible: the build date is the commit's time (vcs.time, stamped by the toolchain), the
# ldflags embed nothing that depends on the time or the directory, and the tarballs have the
# commit's time as every mtime, sorted names, owner 0 and gzip -n: two builds of one commit
# with one toolchain give the same SHA256SUMS (test/release). A tree with changes still
# builds: its binaries say modified (version +dirty, vcs.modified=true).
# PLATFORMS (os/arch, space-separated) narrows the four, as CI's test does to bound its time.
# CYCLONEDX is cyclonedx-gomod (make builds it from tools/cyclonedx); GO the go command.
# Needs git, GNU tar, gzip and sha256sum.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$root/dist}")"
go="${GO:-go}"
cdx="${CYCLONEDX:-$root/bin/cyclonedx-gomod}"
export LC_ALL=C
cd "$root"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
src="$root"
if [[ ! -d .git ]]; then
  # A git worktree (.git is a file): the toolchain stamps VCS information only where .git is a
  # directory, so build from a clone of HEAD with the tree's changes and new files copied in.
  src="$work/src"
  git clone -q --shared --no-checkout "$root" "$src"
  git -C "$src" checkout -q --detach "$(git rev-parse HEAD)"
  git diff --binary HEAD | git -C "$src" apply --allow-empty
  git ls-files -z --others --exclude-standard | (cd "$root" && xargs -0 -r cp --parents -t "$src")
fi
epoch="$(git -C "$src" log -1 --format=%ct HEAD)"

rm -rf "$out"
mkdir -p "$out"
for platform in ${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}; do
  os="${platform%/*}" arch="${platform#*/}"
  bin="$work/$os-$arch/sluice"
  # -mod=readonly: go.sum is the whole truth, nothing is resolved anew. -s -w strip the
  # symbol tables; the build id is a hash of the inputs.
  (cd "$src" && CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOFLAGS=-mod=readonly \
    "$go" build -trimpath -buildvcs=true -ldflags='-s -w' -o "$bin" ./cmd/gateway)
  version="$("$go" version -m "$bin" | awk '$1 == "mod" { print $3; exit }')"
  name="sluice_${version}_${os}_${arch}"
  dir="$work/$name"
  mkdir "$dir"
  install -m 0755 "$bin" "$dir/sluice"
  install -m 0644 LICENSE README.md "$dir/"
  chmod 0755 "$dir"
  tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=ustar \
    -C "$work" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
  # The modules the toolchain recorded in the binary, not what go.mod lists: what shipped.
  "$cdx" bin -json -noserial -notimestamp -output "$out/$name.cdx.json" "$dir/sluice"
  echo "release: $out/$name.tar.gz"
done
(cd "$out" && sha256sum -- *.tar.gz *.cdx.json >SHA256SUMS)
echo "release: $out/SHA256SUMS"
