package slack

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMrkdwn(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"plain", "Deploy now?", "Deploy now?"},
		{"bold", "**Deploy** to __prod__", "*Deploy* to *prod*"},
		{"italic", "an *important* _note_", "an _important_ _note_"},
		{"bold and italic", "**bold** and *it*", "*bold* and _it_"},
		{"strike", "~~old~~ new", "~old~ new"},
		{"escapes", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"no mention injection", "<!channel> hi <@U123>", "&lt;!channel&gt; hi &lt;@U123&gt;"},
		{"link", "see [the diff](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|the diff>"},
		{"link label escaped", "[a <b> | c](https://x.example)", "<https://x.example|a &lt;b&gt; ¦ c>"},
		{"unsafe link kept as text", "[click](javascript:alert(1))", "[click](javascript:alert(1))"},
		{"autolink", "<https://example.com>", "<https://example.com>"},
		{"image", "![logo](https://x.example/l.png)", "<https://x.example/l.png|logo>"},
		{"heading", "## Plan ##", "*Plan*"},
		{"bullets", "- one\n* two\n  + three", "• one\n• two\n  • three"},
		{"numbered", "1. one\n2. two", "1. one\n2. two"},
		{"quote", "> quoted **text**", "> quoted *text*"},
		{"rule", "---", "──────────"},
		{"inline code", "run `rm -rf <dir> **x**` now", "run `rm -rf &lt;dir&gt; **x**` now"},
		{"code block", "```go\nif a < b { x := **y** }\n```", "```\nif a &lt; b { x := **y** }\n```"},
		{"unclosed code block", "```\ncode", "```\ncode\n```"},
		{"multiplication is not italic", "2 * 3 * 4", "2 * 3 * 4"},
		{"snake_case stays", "use my_var_name", "use my_var_name"},
		{"crlf", "a\r\nb", "a\nb"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := mrkdwn(tt.in); got != tt.want {
				t.Errorf("mrkdwn(%q):\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTruncateMrkdwn(t *testing.T) {
	long := strings.Repeat("a & b [link](https://example.com/x) ", 200)
	got := truncateMrkdwn(long, 300)
	if n := utf8.RuneCountInString(got); n > 300 {
		t.Fatalf("truncated to %d runes, want at most 300", n)
	}
	if !strings.HasSuffix(got, "…") {
		t.Errorf("truncated text does not end with …: %q", got[len(got)-20:])
	}
	if strings.Count(got, "<") != strings.Count(got, ">") || strings.HasSuffix(strings.TrimSuffix(got, "…"), "&am") {
		t.Errorf("truncation cut a link or an escape: %q", got)
	}
	if short := truncateMrkdwn("**hi**", 300); short != "*hi*" {
		t.Errorf("short text: got %q", short)
	}
}

func TestReplyText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"  582491 ", "582491"},
		{"<@UBOT01> yes", "yes"},
		{"a &lt; b &amp;&amp; c &gt; d", "a < b && c > d"},
		{"see <https://example.com|example.com>", "see example.com"},
		{"see <https://example.com/x>", "see https://example.com/x"},
		{"<mailto:a@b.example|a@b.example>", "a@b.example"},
	} {
		if got := replyText(tt.in); got != tt.want {
			t.Errorf("replyText(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeMax(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"a<b", 10, "a&lt;b"},
		{"a<b", 6, "a&lt;b"},
		{"a<b", 5, "a…"},
		{"<<<<", 9, "&lt;&lt;…"},
		{"héllo wörld", 6, "héllo…"},
	} {
		if got := escapeMax(c.s, c.n); got != c.want {
			t.Errorf("escapeMax(%q, %d): got %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
