package testworld

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/posts"
	"github.com/musecheck/muse/sources/video/videotest"
)

// The video world: two posts whose words claim nothing ("Watch before they
// delete it"), each with a video making a claim only in it, one burned
// into the picture, the other only spoken. Two news pages refute each.
// The model writes its queries from what the prompt says the video shows
// and says, so only a video that was read reaches the pages.

const (
	VideoPostText = "Watch this before they delete it"
	// VideoScreenClaim is burned into the first video's frames.
	VideoScreenClaim = "LOUVRE TO CLOSE FOREVER IN MAY"
	// VideoSpokenClaim is what the second video's sound says.
	VideoSpokenClaim = "Venice has banned all tourists from the city from August."

	// VideoFrameCaption is the vision model's description of every frame.
	VideoFrameCaption = "A still from a video"

	VideoLouvreAFP      = "The Louvre is not closing, the museum said on Tuesday, calling videos that claim it will shut for good in May false."
	VideoLouvreFrance24 = "A spokesperson for the Louvre said the museum will stay open through May and beyond, with only the Denon wing closed for two days of maintenance."
	VideoVeniceAP       = "Venice has not banned tourists, the city council said, though day-trippers must pay a five-euro fee to enter on busy days."
	VideoVeniceGuardian = "No ban on tourists is planned in Venice for August, a council spokesperson said, calling a viral video false."
)

// VideoURLs are the world's pages, by the claim they refute.
var VideoURLs = map[string][]string{
	"louvre": {"http://www.afp.com/en/news/louvre-not-closing-may", "http://www.france24.com/en/culture/louvre-open-may"},
	"venice": {"http://apnews.com/article/venice-tourists-ban-false", "http://www.theguardian.com/world/venice-no-tourist-ban"},
}

func videoPages() map[string]Page {
	pages := map[string]Page{
		VideoURLs["louvre"][0]: {Title: "The Louvre is not closing in May", Site: "AFP", Date: "2024-01-23",
			Paras: append([]string{VideoLouvreAFP}, Background("AFP", 10)...)},
		VideoURLs["louvre"][1]: {Title: "Louvre stays open: what the museum says", Site: "France 24", Date: "2024-01-24",
			Paras: append([]string{VideoLouvreFrance24}, Background("France 24", 10)...)},
		VideoURLs["venice"][0]: {Title: "Venice has not banned tourists", Site: "AP News", Date: "2024-01-22",
			Paras: append([]string{VideoVeniceAP}, Background("The AP", 10)...)},
		VideoURLs["venice"][1]: {Title: "No tourist ban in Venice, council says", Site: "The Guardian", Date: "2024-01-25",
			Paras: append([]string{VideoVeniceGuardian}, Background("The Guardian", 10)...)},
	}
	for u, p := range pages {
		pu, _ := url.Parse(u)
		p.Path = pu.Path
		pages[u] = p
	}
	return pages
}

// VideoEnv is the video world with a config pointing at it.
type VideoEnv struct {
	Cfg         *setup.Config
	LLM         *llmtest.Server
	Transcriber *llmtest.Transcriber
	Proxy       *url.URL
	// ScreenVideo and SpokenVideo are the posts' videos, made with ffmpeg
	// (and espeak-ng for the speech).
	ScreenVideo, SpokenVideo string
	// Files are served by the world's proxy: a video's URL, its file.
	Files map[string]string
	// Bluesky is a loopback AppView serving VideoBlueskyPost, whose video
	// is SpokenVideo cut into an HLS playlist served by the proxy.
	Bluesky string
}

// VideoBlueskyPost is the Bluesky post with the spoken video.
const VideoBlueskyPost = "https://bsky.app/profile/did:plc:vk3clipsx7q2mzn4wrd5ulpa/post/3kt2vidbqc22p"

//go:embed testdata/bsky_thread_video.json
var bskyVideoThread string

// VideoPlaylist is where the Bluesky post's HLS playlist is, as its
// embed names it; the world serves it over plain HTTP through its proxy,
// as it serves its news pages.
const VideoPlaylist = "video.bsky.app/watch/did%3Aplc%3Avk3clipsx7q2mzn4wrd5ulpa/bafkreid7vcd3vmdwk2ww4ckpy2tfpbtsw5ztaslgdjiqvvpx2kmbv6lfjm/"

var (
	onScreen = regexp.MustCompile(`text on screen: "([^"]+)"`)
	spoken   = regexp.MustCompile(`Spoken[^:]*:((?: \[\d+:\d\d\] [^\n\[]+)+)`)
	stamp    = regexp.MustCompile(`\[\d+:\d\d\] `)
)

// VideoModel answers like a faithful model: queries from the text on
// screen and the speech the post's prompt reports (nothing else of the
// post claims anything), quotes really on each page, and a correction
// citing the first two sources.
func VideoModel(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	prompt := llmtest.LastUser(req)
	switch llmtest.SchemaName(req) {
	case "image_description":
		// What a vision model would say of the frame, whatever it shows.
		return llmtest.Reply{Text: `{"description":"` + VideoFrameCaption + `"}`}, nil
	case "queries":
		var qs []string
		for _, m := range onScreen.FindAllStringSubmatch(prompt, -1) {
			qs = append(qs, strings.ToLower(m[1]))
		}
		if m := spoken.FindStringSubmatch(prompt); m != nil {
			qs = append(qs, strings.TrimSpace(stamp.ReplaceAllString(m[1], "")))
		}
		b, _ := json.Marshal(map[string]any{"queries": qs})
		return llmtest.Reply{Text: string(b)}, nil
	case "evidence":
		return llmtest.Reply{Text: EvidenceAnswer(Articles(prompt), func(art string) (ref, ctx []string) {
			for _, q := range []string{VideoLouvreAFP, VideoLouvreFrance24, VideoVeniceAP, VideoVeniceGuardian} {
				if strings.Contains(art, q) {
					ref = append(ref, q)
				}
			}
			return ref, nil
		})}, nil
	}
	ids := PromptSources(prompt)
	return llmtest.Reply{Text: "The video's claim is false " + strings.Join(ids[:min(2, len(ids))], "") + "."}, nil
}

// NewVideo builds the video world; it skips the test when ffmpeg or
// espeak-ng is missing.
func NewVideo(t testing.TB) *VideoEnv {
	t.Helper()
	dir := t.TempDir()
	env := &VideoEnv{ScreenVideo: filepath.Join(dir, "louvre.mp4"), SpokenVideo: filepath.Join(dir, "venice.mp4")}
	videotest.Clip(t, env.ScreenVideo, videotest.Spec{Scenes: []videotest.Scene{
		{Source: "smptebars", Seconds: 2},
		{Source: "color=c=navy", Text: VideoScreenClaim, Seconds: 3},
	}})
	videotest.Clip(t, env.SpokenVideo, videotest.Spec{Scenes: []videotest.Scene{{Source: "color=c=darkgreen", Seconds: 4}},
		Speech: VideoSpokenClaim})
	pages := videoPages()
	env.Transcriber = &llmtest.Transcriber{Script: []string{VideoSpokenClaim}, Language: "english"}
	env.LLM = llmtest.NewReplyServer(t, VideoModel, llmtest.WithTranscriber(env.Transcriber))
	sx := SearXNG(t, func(q string) []string {
		var out []string
		for key, urls := range VideoURLs {
			if strings.Contains(strings.ToLower(q), key) {
				out = append(out, urls...)
			}
		}
		return out
	})
	env.Files = map[string]string{}
	hlsFiles(t, env.SpokenVideo, filepath.Join(dir, "hls"), "http://"+VideoPlaylist, env.Files)
	appView := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/xrpc/app.bsky.feed.getPostThread":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, strings.ReplaceAll(bskyVideoThread, "https://video.bsky.app/", "http://video.bsky.app/"))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, `{"error":"UpstreamFailure","message":"Upstream Failure"}`)
		}
	}))
	t.Cleanup(appView.Close)
	env.Bluesky = appView.URL
	env.Proxy = fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := "http://" + strings.ToLower(r.Host) + r.URL.EscapedPath()
		if f, ok := env.Files[u]; ok {
			switch filepath.Ext(f) {
			case ".m3u8":
				w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
			case ".ts":
				w.Header().Set("Content-Type", "video/mp2t")
			default:
				w.Header().Set("Content-Type", "video/mp4")
			}
			http.ServeFile(w, r, f)
			return
		}
		p, ok := pages["http://"+strings.ToLower(r.Host)+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, ArticleHTML(p))
	}))
	env.Cfg = worldConfig(t, env.LLM.BaseURL, sx.URL)
	env.Cfg.NoCache = true
	env.Cfg.CacheDir = filepath.Join(dir, "cache")
	return env
}

// hlsFiles cuts the clip at src into an HLS rendition under dir (2 s
// MPEG-TS segments) with a master playlist naming it, and adds each file
// to files under base.
func hlsFiles(t testing.TB, src, dir, base string, files map[string]string) {
	t.Helper()
	tools := videotest.Need(t)
	if err := os.MkdirAll(filepath.Join(dir, "360p"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tools.FFmpeg, "-hide_banner", "-loglevel", "error", "-i", src, "-c:v", "libx264", "-preset", "ultrafast",
		"-g", "25", "-sc_threshold", "0", "-c:a", "aac", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
		"-hls_segment_filename", filepath.Join(dir, "360p", "video%d.ts"), filepath.Join(dir, "360p", "video.m3u8")).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg hls: %v: %s", err, out)
	}
	master := "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=700000,RESOLUTION=640x360,CODECS=\"avc1.64001e,mp4a.40.2\"\n360p/video.m3u8\n"
	if err := os.WriteFile(filepath.Join(dir, "playlist.m3u8"), []byte(master), 0o644); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files[base+filepath.ToSlash(rel)] = p
		}
		return nil
	})
}

// CheckPostURL reads the post at u (VideoBlueskyPost) from the world's
// AppView and checks it.
func (env *VideoEnv) CheckPostURL(t testing.TB, opts pipeline.Options, u string) (*pipeline.Check, error) {
	t.Helper()
	opts.PageProxy, opts.LLMRetryDelay = env.Proxy, 10*time.Millisecond
	opts.Posts = posts.Options{BlueskyURL: env.Bluesky, AllowPrivate: true}
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	p, err := e.PostFromURL(context.Background(), u)
	if err != nil {
		return nil, err
	}
	c := e.NewCheck(p, time.Time{})
	err = e.Run(context.Background(), c, pipeline.StageImages, nil)
	return c, err
}

// Check runs a post with the video at src through the engine built from
// the world's config.
func (env *VideoEnv) Check(t testing.TB, opts pipeline.Options, src string) (*pipeline.Check, error) {
	t.Helper()
	opts.PageProxy, opts.LLMRetryDelay = env.Proxy, 10*time.Millisecond
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: VideoPostText, Author: "Viral Clips", Handle: "@viralclips", PostedAt: Cutoff,
		Platform: "X", Videos: []string{src}}, time.Time{})
	err = e.Run(context.Background(), c, pipeline.StageImages, nil)
	return c, err
}
