package redact

import (
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

const benchSize = 64 << 10

// benchText generates deterministic text of about benchSize bytes from atoms.
func benchText(seed int64, atoms []string, sep string) string {
	rng := rand.New(rand.NewSource(seed))
	var b strings.Builder
	for b.Len() < benchSize {
		b.WriteString(atoms[rng.Intn(len(atoms))])
		b.WriteString(sep)
		if rng.Intn(12) == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

var (
	proseWords = strings.Fields(`the a an of to and in that is was he for it with as his on be at by
		this had not are but from or have they which one you were her all she there would their we him
		been has when who will more no if out so said what up its about into than them can only other
		new some could time these two may then do first any my now such like our over man me even most
		made after also did many before must through back years where much your way well down should
		because each just those people mister how too little state good very make world still own see
		men work long get here between both life being under never day same another know while last
		might us great old year off come since against go came right used take three streaming answer
		gateway request response model provider secret key token access password schema stream`)
	codeAtoms = []string{"func (s *Server) handle(w http.ResponseWriter, r *http.Request) {", "if err != nil {",
		"return fmt.Errorf(\"decode: %w\", err)", "}", "for i := 0; i < len(xs); i++ {", "ctx, cancel := context.WithCancel(ctx)",
		"defer cancel()", "var buf bytes.Buffer", "x := map[string]int{\"a\": 1}", "// askTask sets the task-scoped key", "\t", "s.mu.Lock()",
		"apiKey := os.Getenv(\"OPENAI_API_KEY\")", "const sha = \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b\"", "id := uuid.New() // 123e4567-e89b-12d3-a456-426614174000"}
	secretAtoms = append(append([]string(nil), proseWords[:40]...), fakeOpenAI, fakeAWSID, fakeGitHub, fakeJWT, fakeSlack,
		"Bearer "+fakeBearerTok, "postgres://app:pw1@db/app", fakeStripe, fakeAnthropic)
	cjkAtoms = []string{"漢字", "かな", "交じり", "文", "には", "スペース", "が", "ありません", "。", "秘密", "鍵", "流れ", "答え", "中文", "测试", "数据"}
)

func benchTexts() []struct{ name, text string } {
	return []struct{ name, text string }{
		{"prose", benchText(1, proseWords, " ")},
		{"code", benchText(2, codeAtoms, "\n")},
		{"secrets", benchText(3, secretAtoms, " ")},
		{"cjk", benchText(4, cjkAtoms, "")},
	}
}

// cpuMBs reports MB per CPU second as the metric "cpuMB/s" (0 where unmeasurable).
func cpuMBs(b *testing.B, size int, run func()) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	start, n := cpuTime(), 0
	for b.Loop() {
		run()
		n++
	}
	if d := cpuTime() - start; d > 0 {
		b.ReportMetric(float64(size)*float64(n)/d/1e6, "cpuMB/s")
	}
}

func pieces(s string, n int) []string {
	var ps []string
	for len(s) > n {
		ps = append(ps, s[:n])
		s = s[n:]
	}
	return append(ps, s)
}

// BenchmarkWindow streams each text in 1-, 8- and 64-byte pieces through the default rules.
func BenchmarkWindow(b *testing.B) {
	r := Default()
	for _, tx := range benchTexts() {
		for _, n := range []int{1, 8, 64} {
			ps := pieces(tx.text, n)
			b.Run(fmt.Sprintf("%s/%d", tx.name, n), func(b *testing.B) { streamPieces(b, r, len(tx.text), ps) })
		}
	}
}

// BenchmarkRedact runs the default rules on each whole text.
func BenchmarkRedact(b *testing.B) {
	r := Default()
	for _, tx := range benchTexts() {
		b.Run(tx.name, func(b *testing.B) {
			cpuMBs(b, len(tx.text), func() { r.Redact(tx.text) })
		})
	}
}

// naive is the baseline: one alternation of Go regexps, run over the whole text.
var naive = regexp.MustCompile(strings.Join([]string{
	`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`,
	`(?i:authorization)["']?\s*[:=]\s*["']?[A-Za-z]+ [^\s"']{8,}`,
	`[Bb]earer [A-Za-z0-9._~+/=-]{16,}`,
	`(?i:aws_secret_access_key)["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}`,
	`\bsk-ant-[A-Za-z0-9_-]{20,}`, `\bsk-[A-Za-z0-9_-]{20,}`, `\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`,
	`\bAIza[A-Za-z0-9_-]{35}`, `\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`, `\bgh[pousr]_[A-Za-z0-9]{36,}`, `\bgithub_pat_[A-Za-z0-9_]{22,}`,
	`\bglpat-[A-Za-z0-9_-]{20,}`, `\bxox[baprs]-[A-Za-z0-9-]{10,}`, `\beyJ[A-Za-z0-9_-]{7,}\.eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]*`,
	`\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?)://[^\s:@/]*:[^\s@]+@`,
}, "|"))

func BenchmarkNaiveAlternation(b *testing.B) {
	for _, tx := range benchTexts() {
		b.Run(tx.name, func(b *testing.B) {
			cpuMBs(b, len(tx.text), func() { naive.ReplaceAllString(tx.text, "[REDACTED]") })
		})
	}
}

// BenchmarkWindowOwn streams the texts through the default rules plus the gateway's own
// secrets (issue 47): ten literal values, one key known by hash, the key prefix.
func BenchmarkWindowOwn(b *testing.B) {
	c := Config{KeyHashes: []string{hexHash(ownStatic)}, KeyPrefix: "sk-sluice-"}
	for k := range 10 {
		c.Secrets = append(c.Secrets, fmt.Sprintf("%s-%d", ownAdmin, k))
	}
	r, err := Compile(c)
	if err != nil {
		b.Fatal(err)
	}
	for _, tx := range benchTexts() {
		for _, n := range []int{1, 64} {
			ps := pieces(tx.text, n)
			b.Run(fmt.Sprintf("%s/%d", tx.name, n), func(b *testing.B) { streamPieces(b, r, len(tx.text), ps) })
		}
	}
}

// streamPieces measures streaming ps, size bytes in all, through a window of r.
func streamPieces(b *testing.B, r *Rules, size int, ps []string) {
	cpuMBs(b, size, func() {
		w := r.NewWindow()
		for _, p := range ps {
			w.Write(p)
		}
		w.Flush()
	})
}
