package batch

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/muesli/termenv"
	"github.com/musecheck/muse/sources/llm"
)

// progressPrinter tells a person how a batch is going, on stderr: on a
// terminal one line that updates in place (bar, done/total, failures,
// elapsed, ETA, cost so far) with each failure printed above it; elsewhere
// a plain line per post finished. Nothing goes to stdout.
type progressPrinter struct {
	w     io.Writer
	tty   bool
	start time.Time
	now   func() time.Time
	bar   progress.Model

	mu                  sync.Mutex
	total, done, failed int
	skipped             int
	usage               llm.Usage
	stop                chan struct{}
	stopped             sync.WaitGroup
	lastLen             int
}

func newProgress(w io.Writer, tty bool, total, skipped int, now func() time.Time) *progressPrinter {
	p := &progressPrinter{w: w, tty: tty, now: now, start: now(), total: total, skipped: skipped,
		bar: progress.New(progress.WithoutPercentage(), progress.WithWidth(20), progress.WithColorProfile(termenv.Ascii))}
	running := total - skipped
	fmt.Fprintf(w, "muse: batch: %d posts to check", running)
	if skipped > 0 {
		fmt.Fprintf(w, " (%d already done, skipped)", skipped)
	}
	fmt.Fprintln(w)
	if tty {
		p.stop = make(chan struct{})
		p.stopped.Add(1)
		go p.tick()
	}
	return p
}

// tick redraws the line every half second, so elapsed time moves while
// the first posts are still running.
func (p *progressPrinter) tick() {
	defer p.stopped.Done()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// finished counts one post and says so.
func (p *progressPrinter) finished(line int, failed bool, why string, u llm.Usage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
	p.usage.Add(u)
	if !p.tty {
		msg := "muse: " + p.status()
		if failed {
			msg += fmt.Sprintf("; line %d failed: %s", line, why)
		}
		fmt.Fprintln(p.w, msg)
		return
	}
	if failed {
		p.clear()
		fmt.Fprintf(p.w, "muse: line %d failed: %s\n", line, why)
	}
	p.draw()
}

// close ends the in-place line.
func (p *progressPrinter) close() {
	if !p.tty {
		return
	}
	close(p.stop)
	p.stopped.Wait()
	p.mu.Lock()
	p.draw()
	fmt.Fprintln(p.w)
	p.mu.Unlock()
}

func (p *progressPrinter) clear() {
	fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.lastLen)+"\r")
}

func (p *progressPrinter) draw() {
	running := p.total - p.skipped
	frac := 1.0
	if running > 0 {
		frac = float64(p.done) / float64(running)
	}
	line := p.bar.ViewAs(frac) + " " + p.status()
	p.clear()
	fmt.Fprint(p.w, line)
	p.lastLen = len([]rune(line))
}

// status is "3/10 done, 1 failed, 42s elapsed, ETA 1m30s, $0.0123 so far"
// ("≥$0.0123" when a server reported no usage for some calls; the tokens
// spent when the model has no price).
func (p *progressPrinter) status() string {
	running := p.total - p.skipped
	elapsed := p.now().Sub(p.start)
	s := fmt.Sprintf("%d/%d done, %d failed, %s elapsed", p.done, running, p.failed, round(elapsed))
	if p.done > 0 && p.done < running {
		eta := time.Duration(float64(elapsed) / float64(p.done) * float64(running-p.done))
		s += ", ETA " + round(eta).String()
	}
	u := p.usage
	if u.UnreportedCalls == 0 && u.CostUSD == 0 && u.Tokens() > 0 && u.LLMCalls > u.CachedCalls {
		// Tokens spent on a model muse has no price for are not free.
		return s + fmt.Sprintf(", %d tokens so far (no price for the model)", u.Tokens())
	}
	if cost := u.CostCell(); cost != "unknown" {
		return s + ", " + cost + " so far"
	}
	return s + ", cost unknown so far"
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
