package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/chaos-testing/chaos/runner"
)

// cmdServe serves the results folder over HTTP for a team to browse, on a
// loopback address only: results hold logs and histories of the systems
// under test, and chaos opens no door to the network for them. (Reach it
// from elsewhere through an SSH tunnel.)
func cmdServe(args []string) (int, error) {
	fs := newFlags("serve")
	addr := fs.String("addr", "127.0.0.1:8080", "loopback address to listen on")
	results := fs.String("results", "results", "folder that holds the runs")
	if err := parseNone(fs, args); err != nil {
		return exitUsage, err
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return exitUsage, usageError{fmt.Sprintf("serve: %q: expected a loopback address such as 127.0.0.1:8080", *addr)}
	}
	if err := runner.WriteIndex(*results); err != nil {
		return exitCrash, err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return exitCrash, err
	}
	fmt.Printf("serving %s at http://%s/ (Ctrl-C stops)\n", *results, l.Addr())
	srv := &http.Server{Handler: http.FileServer(http.Dir(*results)), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := interruptible()
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitCrash, err
	}
	return exitValid, nil
}
