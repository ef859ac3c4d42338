// Package archtest holds no code: its tests keep the import rules of the house style (each
// dependency behind one package, the vocabulary and redaction free of dependencies), the
// imports the design forbids between the module's own packages (adapters never reach the
// fallback chain, the relay or the server), and check that every package says what it
// decides in a doc comment.
package archtest
