package lang

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The same news paragraph, written in each script, is about the same
// length in Words: within a factor of two of the English one's count,
// where counting at spaces gives 1 to 3 "words" for Chinese, Japanese and
// Thai.
func TestWordsSameTextEveryScript(t *testing.T) {
	para := map[string]string{
		"en": "The video shared on social media does not show the collapse of the Baltimore bridge. It was filmed in Genoa, Italy, in 2018, when a motorway bridge fell during a storm, the city's police said on Tuesday.",
		"zh": "社交媒体上流传的视频并非巴尔的摩大桥倒塌的画面。警方周二表示，该视频拍摄于二零一八年的意大利热那亚，当时一座高速公路桥在暴风雨中坍塌。",
		"ja": "ソーシャルメディアで共有された動画は、ボルチモアの橋の崩落を映したものではない。市警察は火曜日、この動画は2018年にイタリアのジェノバで嵐の中、高速道路の橋が崩落した際に撮影されたものだと発表した。",
		"th": "วิดีโอที่แชร์กันบนโซเชียลมีเดียไม่ได้แสดงการถล่มของสะพานในเมืองบัลติมอร์ ตำรวจเมืองเปิดเผยเมื่อวันอังคารว่าวิดีโอนี้ถ่ายที่เมืองเจนัว ประเทศอิตาลี ในปี 2018 เมื่อสะพานทางด่วนถล่มระหว่างพายุ",
		"hi": "सोशल मीडिया पर साझा किया गया वीडियो बाल्टीमोर पुल के गिरने का नहीं है। शहर की पुलिस ने मंगलवार को कहा कि यह वीडियो 2018 में इटली के जेनोआ में फिल्माया गया था, जब एक तूफान के दौरान एक राजमार्ग पुल गिर गया था।",
		"ar": "الفيديو المتداول على وسائل التواصل الاجتماعي لا يظهر انهيار جسر بالتيمور. وقالت شرطة المدينة يوم الثلاثاء إن الفيديو صُوّر في جنوة بإيطاليا عام 2018 عندما انهار جسر طريق سريع خلال عاصفة.",
		"ko": "소셜미디어에 공유된 영상은 볼티모어 다리 붕괴 장면이 아니다. 시 경찰은 화요일 이 영상이 2018년 이탈리아 제노바에서 폭풍우 속에 고속도로 다리가 무너졌을 때 촬영된 것이라고 밝혔다.",
		"el": "Το βίντεο που κοινοποιήθηκε στα μέσα κοινωνικής δικτύωσης δεν δείχνει την κατάρρευση της γέφυρας της Βαλτιμόρης. Η αστυνομία της πόλης ανέφερε την Τρίτη ότι γυρίστηκε στη Γένοβα της Ιταλίας το 2018, όταν μια γέφυρα αυτοκινητόδρομου κατέρρευσε κατά τη διάρκεια καταιγίδας.",
	}
	en := Words(para["en"])
	if en != len(strings.Fields(para["en"])) {
		t.Errorf("English: %d words, %d between spaces", en, len(strings.Fields(para["en"])))
	}
	for code, p := range para {
		n := Words(p)
		t.Logf("%s: %d words (%d between spaces)", code, n, len(strings.Fields(p)))
		if n*2 < en || n > en*2 {
			t.Errorf("%s: %d words for the English %d (%d between spaces)", code, n, en, len(strings.Fields(p)))
		}
	}
}

func TestWordsCounts(t *testing.T) {
	for text, want := range map[string]int{
		"":                               0,
		"— … ,":                          0,
		"A well-known 3.5% rise in 2024": 7, // well, known
		"東京都":                            2, // three characters
		"東京都は5日":                         4, // 5 characters, and the digit
		"ภาษาไทย":                        4, // 7 characters
	} {
		if got := Words(text); got != want {
			t.Errorf("Words(%q) = %d, want %d", text, got, want)
		}
	}
	// A Thai vowel sign or tone mark is part of its character.
	if a, b := Words("ที่นี่"), Words("ทน"); a != b {
		t.Errorf("Thai marks counted as characters: %d for ที่นี่, %d for ทน", a, b)
	}
}

func TestSentencesEveryScript(t *testing.T) {
	for text, want := range map[string][]string{
		"यह दावा गलत है। सरकार ने इनकार किया।":            {"यह दावा गलत है।", "सरकार ने इनकार किया।"},
		"政府は否定した。動画は2018年のものだ。":                           {"政府は否定した。", "動画は2018年のものだ。"},
		"هل هذا صحيح؟ لا، ليس كذلك.":                      {"هل هذا صحيح؟", "لا، ليس كذلك."},
		"网上视频是假的！警方说明了情况。":                                {"网上视频是假的！", "警方说明了情况。"},
		"Prices rose 3.5 percent. U.S. officials agreed.": {"Prices rose 3.5 percent.", "U.S. officials agreed."},
		"«Это фейк», — сказал он. Видео старое.":          {"«Это фейк», — сказал он.", "Видео старое."},
	} {
		if got := Sentences(text); !slices.Equal(got, want) {
			t.Errorf("Sentences(%q) = %q", text, got)
		}
	}
}

func TestSentenceCut(t *testing.T) {
	s := "政府は否定した。動画は2018年のものだ。警察が発表した。"
	for n := 0; n <= len(s); n++ {
		i := SentenceCut(s, n)
		if i > n || !utf8.ValidString(s[:i]) {
			t.Fatalf("SentenceCut(%d) = %d", n, i)
		}
		if i > 0 && !strings.HasSuffix(s[:i], "。") {
			t.Errorf("SentenceCut(%d) = %q, not at a sentence end", n, s[:i])
		}
	}
	if i := SentenceCut(s, len(s)); i != len(s) {
		t.Errorf("the whole text is cut at %d of %d", i, len(s))
	}
	if i := SentenceCut("First one. Second one. Third", 24); i != len("First one. Second one.") {
		t.Errorf("English cut at %d", i)
	}
}
