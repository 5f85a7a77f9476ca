package tsa_test

import (
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digitorus/timestamp"
	"github.com/musecheck/muse/sources/tsa"
	"github.com/musecheck/muse/sources/tsa/tsatest"
)

func TestStampVerifiedByOpenSSL(t *testing.T) {
	srv := tsatest.New(t)
	data := []byte(`{"files":[{"path":"correction.md","sha256":"00"}]}` + "\n")
	sum := sha256.Sum256(data)
	resp, at, err := tsa.Stamp(context.Background(), nil, srv.URL, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(at) > time.Minute || at.After(time.Now().Add(time.Second)) {
		t.Errorf("stamped at %v, not now", at)
	}
	if got, err := tsa.Verify(resp, data); err != nil || !got.Equal(at) {
		t.Errorf("Verify = %v, %v; want %v", got, err, at)
	}
	if _, err := tsa.Verify(resp, append(data, ' ')); err == nil {
		t.Error("Verify accepted the token for other data")
	}
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not on PATH: the token is not checked by it")
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dataPath, respPath, caPath := write("manifest.json", data), write("manifest.json.tsr", resp), write("ca.pem", srv.CAPEM)
	out, err := exec.Command(openssl, "ts", "-verify", "-data", dataPath, "-in", respPath, "-CAfile", caPath).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Verification: OK") {
		t.Fatalf("openssl ts -verify: %v\n%s", err, out)
	}
	other := write("other.json", append(data, ' '))
	if out, err := exec.Command(openssl, "ts", "-verify", "-data", other, "-in", respPath, "-CAfile", caPath).CombinedOutput(); err == nil {
		t.Errorf("openssl verified the token against other data:\n%s", out)
	}
}

func TestStampRefusesWrongToken(t *testing.T) {
	sum := sha256.Sum256([]byte("manifest"))
	for name, tamper := range map[string]func(*timestamp.Timestamp){
		"other digest": func(ts *timestamp.Timestamp) { ts.HashedMessage = make([]byte, 32) },
		"no nonce":     func(ts *timestamp.Timestamp) { ts.Nonce = nil },
	} {
		srv := tsatest.New(t)
		srv.Tamper = tamper
		if _, _, err := tsa.Stamp(context.Background(), nil, srv.URL, sum[:]); err == nil {
			t.Errorf("%s: Stamp accepted the token", name)
		}
	}
	if _, _, err := tsa.Stamp(context.Background(), nil, "http://127.0.0.1:1/", sum[:3]); err == nil {
		t.Error("Stamp took a digest that is not SHA-256")
	}
}
