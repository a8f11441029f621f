module github.com/minikv/minikv/bench/fsync

go 1.26.0
