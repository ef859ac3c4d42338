package config

import (
	"errors"
	"fmt"
	"strings"
)

// expand replaces ${VAR} references in a string value that was already parsed, so the value
// of a variable is data, never YAML. The forms, after the shell's:
//
//	${VAR}          the value, or empty when VAR is unset
//	${VAR:-word}    word when VAR is unset or empty
//	${VAR:?message} an error naming VAR and message when VAR is unset or empty
//	$$              a literal $ (so $${VAR} is the literal text ${VAR})
//
// A $ followed by anything else is literal (passwords often hold one), $VAR without braces is
// not expanded, and values are not expanded again. Errors never carry a value.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) || (s[i+1] != '$' && s[i+1] != '{') {
			b.WriteByte(s[i])
			i++
			continue
		}
		if s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", errors.New("unterminated ${ (write $$ for a literal $)")
		}
		expr := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, rest, colon := strings.Cut(expr, ":")
		op, arg := "", ""
		if colon {
			// ${VAR:} has an empty operator, rejected below like any unknown one.
			op, arg = ":", ""
			if rest != "" {
				op, arg = rest[:1], rest[1:]
			}
		}
		if !validName(name) {
			return "", fmt.Errorf("invalid variable name in ${%s}", name)
		}
		val, _ := lookup(name)
		switch op {
		case "":
		case "-":
			if val == "" {
				val = arg
			}
		case "?":
			if val == "" {
				if arg == "" {
					arg = "required"
				}
				return "", fmt.Errorf("environment variable %s is not set: %s", name, arg)
			}
		default:
			return "", fmt.Errorf("unsupported expansion in ${%s:...} (want ${VAR}, ${VAR:-default} or ${VAR:?message})", name)
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c != '_' && !('A' <= c && c <= 'Z') && !('a' <= c && c <= 'z') && !(i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
