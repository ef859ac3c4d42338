//go:build !unix

package redact

func cpuTime() float64 { return 0 }
