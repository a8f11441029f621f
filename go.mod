module github.com/minikv/minikv

go 1.26
