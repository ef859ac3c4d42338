// Package archtest holds no code: its tests keep the import rules of the house style (each
// dependency behind one package, the vocabulary and redaction free of dependencies) and check
// that every package says what it decides in a doc comment.
package archtest
