package analysistest

import (
	"encoding/json"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

// Reg is a register value; v is a JSON text ("" = absent).
func Reg(key, v string) registerop.Value {
	rv := registerop.Value{Key: key}
	if v != "" {
		rv.Value = json.RawMessage(v)
	}
	return rv
}

// Casv is a cas's value; from and to are JSON texts.
func Casv(key, from, to string) registerop.Value {
	return registerop.Value{Key: key, From: json.RawMessage(from), To: json.RawMessage(to)}
}

// Write adds a write of v to key by proc over [t1, t2] ending in typ.
func (h *History) Write(proc int, t1, t2 float64, typ history.Type, key, v string) *History {
	return h.Add(t1, proc, history.Invoke, registerop.FWrite, Reg(key, v)).Add(t2, proc, typ, registerop.FWrite, Reg(key, v))
}

// Read adds an ok read of key returning got over [t1, t2].
func (h *History) Read(proc int, t1, t2 float64, key, got string) *History {
	return h.Add(t1, proc, history.Invoke, registerop.FRead, Reg(key, "")).Add(t2, proc, history.Ok, registerop.FRead, Reg(key, got))
}

// Cas adds a cas of key from from to to by proc over [t1, t2] ending in typ.
func (h *History) Cas(proc int, t1, t2 float64, typ history.Type, key, from, to string) *History {
	return h.Add(t1, proc, history.Invoke, registerop.FCas, Casv(key, from, to)).Add(t2, proc, typ, registerop.FCas, Casv(key, from, to))
}

// Mismatch adds a cas that completed without applying: the value was not from.
func (h *History) Mismatch(proc int, t1, t2 float64, key, from, to string) *History {
	done := Casv(key, from, to)
	done.Mismatch = true
	return h.Add(t1, proc, history.Invoke, registerop.FCas, Casv(key, from, to)).Add(t2, proc, history.Ok, registerop.FCas, done)
}
