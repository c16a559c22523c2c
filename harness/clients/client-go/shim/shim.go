// Package shim runs the real client-go informer as a client under test: each session builds a
// SharedIndexInformer over client-go's real REST client inside a testing/synctest bubble, with an
// http.RoundTripper that hands every request to a harness driving the process over stdin/stdout.
// README.md states the protocol and its timer rules.
package shim
