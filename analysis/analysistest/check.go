package analysistest

import (
	"context"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

// RunChecker runs the checker registered as name on in.
func RunChecker(t *testing.T, name string, in analysis.Input) analysis.Result {
	t.Helper()
	c, ok := analysis.Checkers.Lookup(name)
	if !ok {
		t.Fatalf("no checker %q", name)
	}
	return c.Check(context.Background(), in)
}

// WantResult fails t unless r, a linearizability checker's result, has
// verdict v and, if invalid, a nonlinearizable finding first, with the
// entries that prove it.
func WantResult(t *testing.T, r analysis.Result, v analysis.Verdict) {
	t.Helper()
	if r.Verdict != v {
		t.Fatalf("verdict %s, expected %s; notes %q; findings %+v", r.Verdict, v, r.Notes, r.Findings)
	}
	if v == analysis.Invalid {
		if len(r.Findings) == 0 || r.Findings[0].Kind != "nonlinearizable" || len(r.Findings[0].Ops) == 0 {
			t.Fatalf("invalid without a nonlinearizable finding and its ops: %+v", r.Findings)
		}
	}
}

// FindingsOf lists r's findings of the given kind.
func FindingsOf(r analysis.Result, kind string) []analysis.Finding {
	var fs []analysis.Finding
	for _, f := range r.Findings {
		if f.Kind == kind {
			fs = append(fs, f)
		}
	}
	return fs
}

// Source is an analysis.Source over a history in memory.
func Source(ops []history.Op) analysis.Source {
	return func(each func(history.Op) error) error {
		for _, op := range ops {
			if err := each(op); err != nil {
				return err
			}
		}
		return nil
	}
}
