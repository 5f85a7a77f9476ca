package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/posts"
	"github.com/musecheck/muse/sources/video"
	"github.com/musecheck/muse/sources/video/videotest"
)

// hlsDir cuts a 6 s clip into an HLS rendition (2 s MPEG-TS segments) with
// ffmpeg's hls muxer, beside a master playlist naming it as the 720p
// variant and a 1080p one that must not be chosen.
func hlsDir(t *testing.T) string {
	tools := videotest.Need(t)
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	videotest.Clip(t, clip, videotest.Spec{Scenes: []videotest.Scene{{Source: "testsrc", Seconds: 6}}, Width: 320, Height: 180})
	os.Mkdir(filepath.Join(dir, "720p"), 0o755)
	out, err := exec.Command(tools.FFmpeg, "-hide_banner", "-loglevel", "error", "-i", clip, "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-sc_threshold", "0", "-f", "hls",
		"-hls_time", "2", "-hls_playlist_type", "vod", "-hls_segment_filename", filepath.Join(dir, "720p", "video%d.ts"),
		filepath.Join(dir, "720p", "video.m3u8")).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg hls: %v: %s", err, out)
	}
	master := "#EXTM3U\n#EXT-X-VERSION:3\n" +
		"#EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080\n1080p/video.m3u8\n" +
		"#EXT-X-STREAM-INF:BANDWIDTH=1200000,RESOLUTION=1280x720\n720p/video.m3u8\n"
	os.WriteFile(filepath.Join(dir, "playlist.m3u8"), []byte(master), 0o644)
	return dir
}

func TestVideoDownloaderHLS(t *testing.T) {
	dir := hlsDir(t)
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if strings.HasSuffix(r.URL.Path, ".m3u8") {
			w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
		}
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	work := t.TempDir()
	path, err := pipeline.VideoDownloader{AllowPrivate: true}.FetchVideo(context.Background(), srv.URL+"/playlist.m3u8", work, video.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(asked, " "), "1080p") || len(asked) != 5 { // master, variant, three segments
		t.Errorf("asked %v", asked)
	}
	tools := videotest.Need(t)
	info, err := video.Probe(context.Background(), tools, path, video.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != "mpegts" || info.Duration < 5*time.Second || info.Duration > 7*time.Second {
		t.Errorf("downloaded %+v", info)
	}
	// Too long a playlist is refused before a segment is fetched.
	asked = nil
	_, err = pipeline.VideoDownloader{AllowPrivate: true}.FetchVideo(context.Background(), srv.URL+"/playlist.m3u8", t.TempDir(),
		video.Options{MaxDuration: 3 * time.Second})
	if !errors.Is(err, video.ErrTooLong) || len(asked) != 2 {
		t.Errorf("a 6 s playlist under a 3 s cap: %v, asked %v", err, asked)
	}
	// So is one over the size cap, as it is read.
	_, err = pipeline.VideoDownloader{AllowPrivate: true}.FetchVideo(context.Background(), srv.URL+"/playlist.m3u8", t.TempDir(),
		video.Options{MaxBytes: 2000})
	if !errors.Is(err, video.ErrTooLarge) {
		t.Errorf("over the size cap: %v", err)
	}
}

// A playlist served from a public-looking host that lists segments on a
// loopback address (an internal service) is refused, and nothing reaches
// the address, though the proxy would forward there.
func TestVideoPlaylistPointingAtLoopbackRefused(t *testing.T) {
	port, conns := fetchtest.Internal(t)
	for _, ref := range []string{"http://127.0.0.1:" + port + "/video0.ts", "http://2130706433:" + port + "/video0.ts",
		"http://localhost:" + port + "/video0.ts", "http://169.254.169.254/latest/meta-data/"} {
		proxy := fetchtest.StartForwarding(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
			fmt.Fprintf(w, "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\n%s\n#EXT-X-ENDLIST\n", ref)
		}))
		dl := pipeline.VideoDownloader{Proxy: proxy.ProxyFunc()}
		_, err := dl.FetchVideo(context.Background(), "http://video.bsky.app/watch/did%3Aplc%3Aabc/bafkrei/playlist.m3u8", t.TempDir(), video.Options{})
		var ae *fetch.AddressError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "playlist points at") {
			t.Errorf("%s: %v, want a refused address", ref, err)
		}
		if proxy.Forwarded() != 0 {
			t.Errorf("%s: the proxy forwarded %d requests", ref, proxy.Forwarded())
		}
	}
	if conns() != 0 {
		t.Errorf("the internal service got %d connections", conns())
	}
}

// A video given by URL is downloaded into the cache and read (the spoken
// claim reaches its correction); an HTML page given as a video is refused
// saying so. Nothing is left in the cache.
func TestVideoPostByURL(t *testing.T) {
	env := testworld.NewVideo(t)
	u := "http://cdn.videos.example/clips/venice.mp4"
	env.Files[u] = env.SpokenVideo
	c, err := env.Check(t, pipeline.Options{}, u)
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Video; v == nil || v.Error != "" || len(v.Transcript) != 1 || v.Source != u {
		t.Fatalf("video %+v", v)
	}
	if !cites(c, testworld.VideoURLs["venice"]) {
		t.Errorf("correction %+v", c.Correction)
	}
	c, _ = env.Check(t, pipeline.Options{}, testworld.VideoURLs["louvre"][0])
	if v := c.Video; v == nil || !strings.Contains(v.Error, "serves an HTML page") || len(v.Frames) != 0 {
		t.Errorf("a page given as a video: %+v", v)
	}
	assertEmptyVideoCache(t, env.Cfg.CacheDir)
}

// A Bluesky post read by its URL whose video (an app.bsky.embed.video
// with its HLS playlist) carries the claim in its sound: the playlist is
// read, its segments downloaded and the sound transcribed; the thumbnail
// is not read as an image besides, nor said to be all that is read.
func TestVideoBlueskyPostByURL(t *testing.T) {
	env := testworld.NewVideo(t)
	c, err := env.CheckPostURL(t, pipeline.Options{}, testworld.VideoBlueskyPost)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Post
	if p.Platform != posts.Bluesky || len(p.Videos) != 1 || !strings.HasSuffix(p.Videos[0], "/playlist.m3u8") || len(p.Images) != 0 ||
		strings.Contains(strings.Join(p.Notes, " "), "only its thumbnail") || p.AltTexts[p.Videos[0]] != "A green screen and a voice" {
		t.Fatalf("post %+v", p)
	}
	v := c.Video
	if v == nil || v.Error != "" || len(v.Transcript) != 1 || v.AltText != "A green screen and a voice" ||
		!strings.HasSuffix(v.Poster, "/thumbnail.jpg") || // the thumbnail, kept for reverse image search
		!strings.Contains(v.Description, `Its alt text says "A green screen and a voice"`) {
		t.Fatalf("video %+v", v)
	}
	if !cites(c, testworld.VideoURLs["venice"]) {
		t.Errorf("correction %+v", c.Correction)
	}
	assertEmptyVideoCache(t, env.Cfg.CacheDir)
}
