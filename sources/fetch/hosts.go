package fetch

import (
	"context"
	"sync"
)

// hostLimiter bounds concurrent requests per host with one semaphore per
// host, dropped again when nobody holds or waits for it so a long session
// does not keep one per host ever seen.
type hostLimiter struct {
	per int
	mu  sync.Mutex
	m   map[string]*hostSlot
}

type hostSlot struct {
	sem   chan struct{}
	users int // holders plus waiters
}

func newHostLimiter(per int) *hostLimiter {
	return &hostLimiter{per: per, m: map[string]*hostSlot{}}
}

// acquire waits for a slot on host and returns the function that frees it.
func (l *hostLimiter) acquire(ctx context.Context, host string) (release func(), err error) {
	l.mu.Lock()
	s := l.m[host]
	if s == nil {
		s = &hostSlot{sem: make(chan struct{}, l.per)}
		l.m[host] = s
	}
	s.users++
	l.mu.Unlock()

	done := func() {
		l.mu.Lock()
		s.users--
		if s.users == 0 {
			delete(l.m, host)
		}
		l.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-s.sem
			done()
		})
	}, nil
}
