package report_test

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/chaos-testing/chaos/analysis/lock"
	"github.com/chaos-testing/chaos/compare"
	"github.com/chaos-testing/chaos/internal/testenv"
	"github.com/chaos-testing/chaos/runner/runtest"
	_ "github.com/chaos-testing/chaos/targets/redis"
	_ "github.com/chaos-testing/chaos/workloads/lock"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// browsersOwn matches the requests Chromium makes for itself, whatever the
// page (network time, component updates, sign-in), which its flags do not
// all turn off.
var browsersOwn = regexp.MustCompile(`^(GET|POST|CONNECT) (http://)?[a-z0-9.-]*\b(google\.com|googleapis\.com|gvt1\.com)[:/]`)

// TestReportInChromium runs a real plan (Redlock, holder paused), renders
// its report.html in headless Chromium (Debian's package) and saves a
// screenshot under results/test-screenshots. The browser's every
// connection goes to a local proxy that records it, so nothing leaves the
// machine; the page must make none, and log nothing to the console (a
// failed load is logged there). The detector is first shown to catch a
// page that does make a request.
func TestReportInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/test installs it)")
	}
	probe := filepath.Join(t.TempDir(), "probe.html")
	os.WriteFile(probe, []byte(`<!DOCTYPE html><img src="http://probe.invalid/x.png">`), 0o644)
	if requests, _, _ := render(t, browser, probe, ""); len(requests) == 0 {
		t.Fatal("a page loading an image over the network made no request the proxy saw")
	}

	_, dir := runtest.Run(t, runtest.Plan(t, filepath.Join("..", "plans", "redlock-pause.yaml"), 15*time.Second))
	out, err := filepath.Abs(filepath.Join("..", "results", "test-screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(out, 0o755)
	shot := filepath.Join(out, "redlock-pause-report.png")
	report := filepath.Join(dir, "report.html")
	quiet := func(what string, requests, console []string) {
		for _, r := range requests {
			t.Errorf("%s made a request (caught by the proxy): %q", what, r)
		}
		for _, c := range console {
			t.Errorf("%s: console: %s", what, c)
		}
	}
	requests, console, _ := render(t, browser, report, shot)
	quiet("report.html", requests, console)
	fi, err := os.Stat(shot)
	if err != nil || fi.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, fi.Size())

	// The lock's holds are drawn, and the page opened at a finding marks
	// that finding's operations (its script ran: --dump-dom gives the
	// DOM after it).
	requests, console, dom := render(t, browser, report, "")
	quiet("report.html", requests, console)
	if n := strings.Count(dom, `class="hold"`); n == 0 {
		t.Error("no lock hold drawn on the timeline")
	}
	requests, console, dom = render(t, browser, report+"#finding-1", "")
	quiet("report.html#finding-1", requests, console)
	marked := regexp.MustCompile(`<g class="([^"]*)" id="op-\d+" data-findings="([^"]*)"`).FindAllStringSubmatch(dom, -1)
	ops := 0
	for _, m := range marked {
		in := slices.Contains(strings.Fields(m[2]), "finding-1")
		hl := slices.Contains(strings.Fields(m[1]), "hl")
		if in {
			ops++
		}
		if in != hl {
			t.Errorf("an operation of findings %q has the classes %q: want hl exactly on finding-1's", m[2], m[1])
		}
	}
	if ops == 0 {
		t.Errorf("no operation of finding-1 on the timeline (%d operations in findings)", len(marked))
	}
	if !strings.Contains(dom, `class="finding sel" id="finding-1"`) {
		t.Error("finding-1 is not marked as selected")
	}
	shotFinding := filepath.Join(out, "redlock-pause-finding-1.png")
	requests, console, _ = render(t, browser, report+"#finding-1", shotFinding)
	quiet("report.html#finding-1", requests, console)
	t.Logf("screenshot: %s", shotFinding)

	// The comparison table of that run, as chaos compare DIR writes it.
	table, err := compare.Build([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	cmp := filepath.Join(t.TempDir(), "compare")
	if err := compare.Write(cmp, "redlock-pause", table); err != nil {
		t.Fatal(err)
	}
	shot = filepath.Join(out, "redlock-pause-compare.png")
	requests, console, _ = render(t, browser, filepath.Join(cmp, "compare.html"), shot)
	if len(requests) > 0 || len(console) > 0 {
		t.Errorf("compare.html: requests %q, console %q", requests, console)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 5_000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

// render opens page in headless Chromium, with every connection sent to a
// local proxy, and returns the requests the page made (the browser's own
// are logged and left out) and its console lines; with shot set, it saves
// a screenshot there, and otherwise returns the DOM once the page's script
// ran (page may end in a #fragment).
func render(t *testing.T, browser, page, shot string) (requests, console []string, dom string) {
	t.Helper()
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			line = strings.TrimSpace(line)
			if browsersOwn.MatchString(line) {
				t.Logf("the browser's own request, kept on the machine: %q", line)
				continue
			}
			mu.Lock()
			requests = append(requests, line)
			mu.Unlock()
		}
	}()
	args := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=" + proxy.Addr().String(),
		// Most of the browser's own traffic (updates, metrics) is off.
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
		"--enable-logging=stderr", "--v=0", "--window-size=1200,2000"}
	if shot != "" {
		args = append(args, "--screenshot="+shot)
	} else {
		args = append(args, "--dump-dom")
	}
	var stdout, logs bytes.Buffer
	cmd := exec.Command(browser, append(args, "file://"+page)...)
	cmd.Stdout, cmd.Stderr = &stdout, &logs
	err = cmd.Run()
	proxy.Close()
	<-done
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, logs.String())
	}
	for _, line := range strings.Split(logs.String()+stdout.String(), "\n") {
		if strings.Contains(line, "CONSOLE") {
			console = append(console, line)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return requests, console, stdout.String()
}
