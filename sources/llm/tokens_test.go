package llm

import (
	"strings"
	"testing"
)

// sameNews is one news paragraph written in eight scripts.
var sameNews = map[string]string{
	"en": "The video shared on social media does not show the collapse of the Baltimore bridge. It was filmed in Genoa, Italy, in 2018, when a motorway bridge fell during a storm, the city's police said on Tuesday.",
	"zh": "社交媒体上流传的视频并非巴尔的摩大桥倒塌的画面。警方周二表示，该视频拍摄于二零一八年的意大利热那亚，当时一座高速公路桥在暴风雨中坍塌。",
	"ja": "ソーシャルメディアで共有された動画は、ボルチモアの橋の崩落を映したものではない。市警察は火曜日、この動画は2018年にイタリアのジェノバで嵐の中、高速道路の橋が崩落した際に撮影されたものだと発表した。",
	"th": "วิดีโอที่แชร์กันบนโซเชียลมีเดียไม่ได้แสดงการถล่มของสะพานในเมืองบัลติมอร์ ตำรวจเมืองเปิดเผยเมื่อวันอังคารว่าวิดีโอนี้ถ่ายที่เมืองเจนัว ประเทศอิตาลี ในปี 2018 เมื่อสะพานทางด่วนถล่มระหว่างพายุ",
	"hi": "सोशल मीडिया पर साझा किया गया वीडियो बाल्टीमोर पुल के गिरने का नहीं है। शहर की पुलिस ने मंगलवार को कहा कि यह वीडियो 2018 में इटली के जेनोआ में फिल्माया गया था, जब एक तूफान के दौरान एक राजमार्ग पुल गिर गया था।",
	"ar": "الفيديو المتداول على وسائل التواصل الاجتماعي لا يظهر انهيار جسر بالتيمور. وقالت شرطة المدينة يوم الثلاثاء إن الفيديو صُوّر في جنوة بإيطاليا عام 2018 عندما انهار جسر طريق سريع خلال عاصفة.",
	"ko": "소셜미디어에 공유된 영상은 볼티모어 다리 붕괴 장면이 아니다. 시 경찰은 화요일 이 영상이 2018년 이탈리아 제노바에서 폭풍우 속에 고속도로 다리가 무너졌을 때 촬영된 것이라고 밝혔다.",
	"el": "Το βίντεο που κοινοποιήθηκε στα μέσα κοινωνικής δικτύωσης δεν δείχνει την κατάρρευση της γέφυρας της Βαλτιμόρης. Η αστυνομία της πόλης ανέφερε την Τρίτη ότι γυρίστηκε στη Γένοβα της Ιταλίας το 2018, όταν μια γέφυρα αυτοκινητόδρομου κατέρρευσε κατά τη διάρκεια καταιγίδας.",
}

// The same paragraph costs about as many tokens in every script (1 to 1.8
// times English; Greek, which o200k splits finely, 2.1 times), where four bytes a token made it 2.6
// times as costly in Hindi and 2.7 times in Thai, and so gave a page in
// them less than half of an English one's text.
func TestCountTokensEveryScript(t *testing.T) {
	en := CountTokens(sameNews["en"])
	if en < 35 || en > 60 {
		t.Fatalf("English: %d tokens", en)
	}
	for code, p := range sameNews {
		n := CountTokens(p)
		t.Logf("%s: %d tokens, %d at four bytes a token", code, n, (len(p)+3)/4)
		if n < en || n*4 > 9*en {
			t.Errorf("%s: %d tokens for the English %d", code, n, en)
		}
	}
	if n := (len(sameNews["hi"]) + 3) / 4; n < 2*en {
		t.Errorf("four bytes a token gives Hindi %d for the English %d: not the fault this fixes", n, en)
	}
}

// BenchmarkCountTokens is the cost of counting a 20,000-byte page (the
// most the evidence stage ever reads of one) in English and in Hindi.
func BenchmarkCountTokens(b *testing.B) {
	CountTokens("") // the vocabulary is read once, on first use
	for _, code := range []string{"en", "hi", "ja"} {
		page := strings.Repeat(sameNews[code]+"\n\n", 20000/len(sameNews[code]))
		b.Run(code, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				CountTokens(page)
			}
		})
	}
}
