package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/minikv/minikv/internal/bench"
)

// serveNull runs the null server: `minikv-bench serve-null -p PORT -d N`.
// --compare null starts it as a separate process so that its CPU is not
// the client's.
func serveNull(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("minikv-bench serve-null", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("p", 11311, "TCP port on 127.0.0.1")
	size := fs.Int("d", 32, "value size of every get reply")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(stderr, "minikv-bench serve-null:", err)
		return exitUsage
	}
	if err := bench.ServeNull(ctx, ln, *size); err != nil {
		fmt.Fprintln(stderr, "minikv-bench serve-null:", err)
		return exitUsage
	}
	return exitOK
}
