package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// query runs one statement on url and returns its single text value.
func query(t *testing.T, url, sql string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	var v string
	err = c.QueryRow(ctx, sql).Scan(&v)
	return v, err
}

// TestStartStopStart: the data outlives a Stop, and a stopped server refuses connections.
func TestStartStopStart(t *testing.T) {
	s := Start(t)
	if _, err := query(t, s.URL, "CREATE TABLE kept AS SELECT 'still here'::text AS v"); err != nil && err != pgx.ErrNoRows {
		t.Fatalf("create: %v", err)
	}
	s.Stop(t)
	if _, err := query(t, s.URL, "SELECT 'x'"); err == nil {
		t.Fatal("got an answer from a stopped server, want an error")
	}
	s.Start(t)
	got, err := query(t, s.URL, "SELECT v FROM kept")
	if err != nil || got != "still here" {
		t.Fatalf("got %q, %v after a restart, want %q", got, err, "still here")
	}
	other := s.NewDB(t)
	if got, err := query(t, other, "SELECT current_database()"); err != nil || got == "sluice" {
		t.Fatalf("got database %q, %v from NewDB, want a fresh one", got, err)
	}
	if dump := s.Dump(t, "sluice"); len(dump) == 0 {
		t.Fatal("pg_dump wrote nothing")
	}
}
