// Package archtest holds no code: its tests keep the import rules of the house style (each
// dependency behind one package, the vocabulary, redaction and the wire schemas free of
// dependencies and of the module), the imports the design forbids between the module's own
// packages (adapters never reach the fallback chain, the relay, the server, a client
// dialect or the round), and check that every package says what it decides in a doc
// comment.
package archtest
