// Package validate checks MiniKV's Kubernetes manifests offline, in `make
// test`: every object is decoded strictly into the Kubernetes API's own Go
// types (k8s.io/api), which rejects unknown and duplicate fields and wrong
// types as `kubectl apply --validate=strict` would, and the objects that
// are applied together are checked against each other (selectors, ports,
// volumes, the headless Service of each StatefulSet, the twemproxy and
// cluster configuration they embed).
//
// It is a module of its own so that k8s.io/api stays out of MiniKV's
// go.mod, as bench/lsm keeps the other storage engines out.
package validate
