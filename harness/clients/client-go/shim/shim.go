// Package shim runs client-go's own pieces as clients under test (the SharedIndexInformer, the
// indexer informers, a DeltaFIFO controller, a bare Reflector, tools/watch's RetryWatcher and informer
// watcher, controller-runtime's cache): each mode is a listwatchtest.Client, served by
// listwatchtest.Serve over stdin/stdout. README.md states the protocol and its timer rules.
package shim
