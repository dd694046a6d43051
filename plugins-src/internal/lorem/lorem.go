// Package lorem generates lorem ipsum placeholder text from a seed: the
// same seed, unit and count give the same text everywhere (the generator
// is package seeded's PCG). The vocabulary is the usual one, the Latin of
// Cicero's De finibus bonorum et malorum (1.10.32–33) as the printers'
// specimen mangled it; the text means nothing, which is its purpose.
package lorem

import (
	"errors"
	"strings"

	"github.com/toolhost/toolhost/plugins-src/internal/seeded"
)

// The bounds on count, per unit: each keeps the result far below the
// platform's 256 KiB result cap.
const (
	MaxWords      = 10000
	MaxSentences  = 1000
	MaxParagraphs = 100
)

// ErrCount is a count below 1 or past its unit's bound; ErrUnit an unknown unit.
var (
	ErrCount = errors.New("lorem: count out of range")
	ErrUnit  = errors.New("lorem: unknown unit")
)

// words is the vocabulary: an array, so that nothing is built at start.
var words = [...]string{
	"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
	"eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim",
	"ad", "minim", "veniam", "quis", "nostrud", "exercitation", "ullamco", "laboris", "nisi",
	"aliquip", "ex", "ea", "commodo", "consequat", "duis", "aute", "irure", "in", "reprehenderit",
	"voluptate", "velit", "esse", "cillum", "eu", "fugiat", "nulla", "pariatur", "excepteur", "sint",
	"occaecat", "cupidatat", "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt",
	"mollit", "anim", "id", "est", "laborum", "perspiciatis", "unde", "omnis", "iste", "natus",
	"error", "voluptatem", "accusantium", "doloremque", "laudantium", "totam", "rem", "aperiam",
	"eaque", "ipsa", "quae", "ab", "illo", "inventore", "veritatis", "quasi", "architecto", "beatae",
	"vitae", "dicta", "explicabo", "nemo", "ipsam", "quia", "voluptas", "aspernatur", "aut", "odit",
	"fugit", "consequuntur", "magni", "dolores", "eos", "ratione", "sequi", "nesciunt", "neque",
	"porro", "quisquam", "dolorem", "adipisci", "numquam", "eius", "modi", "tempora", "incidunt",
	"magnam", "quaerat",
}

// opening is how lorem ipsum starts, when the caller wants it to.
const opening = "Lorem ipsum dolor sit amet, consectetur adipiscing elit."

// Generate returns count words, sentences or paragraphs (unit "words",
// "sentences", "paragraphs") and the number of words in them. Words are
// lower case, separated by spaces; a sentence is 6 to 14 words, the first
// capitalised, with a comma after a word about one time in eight, ending
// with a full stop; a paragraph is 4 to 7 sentences, and paragraphs are
// separated by a blank line. classic starts the text with "Lorem ipsum
// dolor sit amet" (words) or the classic first sentence.
func Generate(unit string, count int, seed uint64, classic bool) (string, int, error) {
	limit := map[string]int{"words": MaxWords, "sentences": MaxSentences, "paragraphs": MaxParagraphs}
	max, ok := limit[unit]
	if !ok {
		return "", 0, ErrUnit
	}
	if count < 1 || count > max {
		return "", 0, ErrCount
	}
	g := &gen{src: seeded.New(seed)}
	switch unit {
	case "words":
		start := 0
		if classic {
			for _, w := range strings.Fields("lorem ipsum dolor sit amet")[:min(5, count)] {
				g.word(w)
			}
			start = min(5, count)
		}
		for range count - start {
			g.word(g.pick())
		}
	case "sentences":
		for i := range count {
			g.sep(" ")
			g.sentence(classic && i == 0)
		}
	case "paragraphs":
		for i := range count {
			g.sep("\n\n")
			for j := range g.src.Between(4, 7) {
				g.sep(" ")
				g.sentence(classic && i == 0 && j == 0)
			}
		}
	}
	return g.b.String(), g.n, nil
}

// gen accumulates the text.
type gen struct {
	src *seeded.Source
	b   strings.Builder
	n   int // words written
}

func (g *gen) pick() string { return words[g.src.Below(uint64(len(words)))] }

// sep writes s unless the text is empty or already ends with white space.
func (g *gen) sep(s string) {
	if g.b.Len() > 0 && !strings.HasSuffix(g.b.String(), " ") && !strings.HasSuffix(g.b.String(), "\n") {
		g.b.WriteString(s)
	}
}

// word writes w after a space.
func (g *gen) word(w string) {
	g.sep(" ")
	g.b.WriteString(w)
	g.n++
}

// sentence writes one sentence, or the classic opening.
func (g *gen) sentence(classic bool) {
	if classic {
		g.b.WriteString(opening)
		g.n += 8
		return
	}
	n := g.src.Between(6, 14)
	for i := range n {
		w := g.pick()
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			g.b.WriteByte(' ')
		}
		g.b.WriteString(w)
		g.n++
		if i < n-1 && g.src.Below(8) == 0 {
			g.b.WriteByte(',')
		}
	}
	g.b.WriteByte('.')
}
