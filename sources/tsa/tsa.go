// Package tsa asks an RFC 3161 time-stamping authority to stamp a SHA-256
// digest: it sends a TimeStampReq (DER, application/timestamp-query) and
// checks the TimeStampResp it gets back (status granted, the signature
// over the token, the digest and the nonce it was asked for).
package tsa

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/digitorus/timestamp"
)

// maxResponse bounds a TimeStampResp: a token with its certificate chain
// is a few kilobytes.
const maxResponse = 1 << 20

// Stamp asks the authority at url to time-stamp digest (a SHA-256 hash)
// and returns the TimeStampResp as received (DER, what `openssl ts
// -verify -in` reads) and the time the authority put in it. client nil
// uses one that gives up after 30 seconds.
func Stamp(ctx context.Context, client *http.Client, url string, digest []byte) ([]byte, time.Time, error) {
	if len(digest) != sha256.Size {
		return nil, time.Time{}, fmt.Errorf("time-stamp: a SHA-256 digest is %d bytes, not %d", sha256.Size, len(digest))
	}
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp: nonce: %w", err)
	}
	q := timestamp.Request{HashAlgorithm: crypto.SHA256, HashedMessage: digest, Certificates: true, Nonce: nonce}
	body, err := q.Marshal()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/timestamp-query")
	req.Header.Set("Accept", "application/timestamp-reply")
	resp, err := client.Do(req)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: read: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: HTTP %s", url, resp.Status)
	}
	if len(raw) > maxResponse {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: the response is over %d bytes", url, maxResponse)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/timestamp-reply") && !strings.HasPrefix(ct, "application/timestamp-response") {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: the response is %s, not application/timestamp-reply", url, ct)
	}
	ts, err := timestamp.ParseResponse(raw)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: %w", url, err)
	}
	if err := check(ts, digest, nonce); err != nil {
		return nil, time.Time{}, fmt.Errorf("time-stamp authority %s: %w", url, err)
	}
	return raw, ts.Time, nil
}

// check refuses a token that stamps something other than what was asked.
func check(ts *timestamp.Timestamp, digest []byte, nonce *big.Int) error {
	switch {
	case ts.HashAlgorithm != crypto.SHA256 || !bytes.Equal(ts.HashedMessage, digest):
		return fmt.Errorf("the token stamps another digest than the one sent")
	case ts.Nonce == nil || ts.Nonce.Cmp(nonce) != 0:
		return fmt.Errorf("the token's nonce is not the one sent (a replayed response?)")
	case len(ts.Certificates) == 0:
		return fmt.Errorf("the token carries no certificate, so its signature cannot be checked")
	}
	return nil
}

// Verify parses a TimeStampResp kept beside the data it stamps, checks
// its signature and that it stamps the SHA-256 of data, and returns the
// authority's time. Whether the signer is an authority to trust is for
// the reader to decide (openssl ts -verify with its certificate).
func Verify(resp, data []byte) (time.Time, error) {
	ts, err := timestamp.ParseResponse(resp)
	if err != nil {
		return time.Time{}, fmt.Errorf("time-stamp token: %w", err)
	}
	sum := sha256.Sum256(data)
	if ts.HashAlgorithm != crypto.SHA256 || !bytes.Equal(ts.HashedMessage, sum[:]) {
		return time.Time{}, fmt.Errorf("time-stamp token: it stamps another digest than the data's SHA-256")
	}
	if len(ts.Certificates) == 0 {
		return time.Time{}, fmt.Errorf("time-stamp token: it carries no certificate, so its signature cannot be checked")
	}
	return ts.Time, nil
}
