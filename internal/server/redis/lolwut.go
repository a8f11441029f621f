package redis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// LOLWUT [VERSION v] [args ...], as Redis 7.0 answers it: the default
// (and any version but 5 and 6) prints the version; VERSION 5 draws Georg
// Nees's "Schotter" in Braille characters (LOLWUT [cols] [squares per row]
// [squares per column]), VERSION 6 a skyline in the terminal's four grays
// (LOLWUT [cols] [rows]), with random placements as Redis's, so two calls
// differ; the replies are verbatim strings in RESP3.

func lolwutCommands() []respCommand {
	return []respCommand{
		{name: "lolwut", arity: -1, flags: []string{"readonly", "fast"}, group: "server", since: "5.0.0", complexity: "",
			summary: "Displays computer art and the Redis version", args: []docArg{{name: "version", typ: "integer", token: "VERSION", optional: true}},
			run: cmdLolwut},
	}
}

func cmdLolwut(rc *conn, argv [][]byte) {
	args := argv[1:]
	version := 7
	if len(argv) >= 3 && is(argv[1], "version") {
		v, err := strconv.ParseInt(string(argv[2]), 10, 64)
		if err != nil {
			rc.w.Error(errNotInt)
			return
		}
		version, args = int(uint32(v)), argv[3:]
	}
	var out string
	switch version {
	case 5, 6:
		n := [...]int{5: 3, 6: 2}[version]
		vals := [...]int64{66, 8, 12}
		if version == 6 {
			vals = [3]int64{80, 20, 0}
		}
		for i := 0; i < n && i < len(args); i++ {
			v, err := strconv.ParseInt(string(args[i]), 10, 64)
			if err != nil {
				rc.w.Error(errNotInt)
				return
			}
			vals[i] = v
		}
		clamp := func(v, hi int64) int { return int(min(max(v, 1), hi)) }
		if version == 5 {
			out = lolwutSchotter(clamp(vals[0], 1000), clamp(vals[1], 200), clamp(vals[2], 200)) +
				"\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + Version + "\n"
		} else {
			out = lolwutSkyline(clamp(vals[0], 1000), clamp(vals[1], 1000)) +
				"\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. " + Version + "\n"
		}
	default:
		out = "Redis ver. " + Version + "\n"
	}
	rc.w.Verbatim("txt", []byte(out))
}

// lwCanvas is LOLWUT's canvas of pixels (colors).
type lwCanvas struct {
	w, h int
	px   []byte
}

func newCanvas(w, h int, bg byte) *lwCanvas {
	c := &lwCanvas{w: w, h: h, px: make([]byte, w*h)}
	for i := range c.px {
		c.px[i] = bg
	}
	return c
}

func (c *lwCanvas) set(x, y int, color byte) {
	if x >= 0 && x < c.w && y >= 0 && y < c.h {
		c.px[x+y*c.w] = color
	}
}

func (c *lwCanvas) get(x, y int) byte {
	if x >= 0 && x < c.w && y >= 0 && y < c.h {
		return c.px[x+y*c.w]
	}
	return 0
}

// line draws with Bresenham's algorithm.
func (c *lwCanvas) line(x1, y1, x2, y2 int, color byte) {
	dx, dy := abs(x2-x1), abs(y2-y1)
	sx, sy := 1, 1
	if x1 >= x2 {
		sx = -1
	}
	if y1 >= y2 {
		sy = -1
	}
	err := dx - dy
	for {
		c.set(x1, y1, color)
		if x1 == x2 && y1 == y2 {
			return
		}
		e2 := err * 2
		if e2 > -dy {
			err -= dy
			x1 += sx
		}
		if e2 < dx {
			err += dx
			y1 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// square draws a square centred at x,y, of side size, rotated by angle.
func (c *lwCanvas) square(x, y int, size, angle float32) {
	size = float32(math.Round(float64(size / 1.4142135623)))
	var px, py [4]int
	k := float32(math.Pi/4) + angle
	for j := range 4 {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(size) + float64(x)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(size) + float64(y)))
		k += math.Pi / 2
	}
	for j := range 4 {
		c.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], 1)
	}
}

// lolwutSchotter is LOLWUT 5's drawing, rendered in Braille (2x4 pixels
// a character).
func lolwutSchotter(cols, perRow, perCol int) string {
	width := cols * 2
	padding := 0
	if cols > 2 {
		padding = 2
	}
	side := float32(width-padding*2) / float32(perRow)
	height := int(side*float32(perCol)) + padding*2
	c := newCanvas(width, height, 0)
	for y := range perCol {
		for x := range perRow {
			sx := int(float32(x)*side + side/2 + float32(padding))
			sy := int(float32(y)*side + side/2 + float32(padding))
			var angle float32
			if y > 1 {
				r := func() float32 {
					v := rand.Float32() / float32(perCol) * float32(y)
					if rand.IntN(2) == 1 {
						v = -v
					}
					return v
				}
				r1, r2, r3 := r(), r(), r()
				angle = r1
				sx += int(r2 * side / 3)
				sy += int(r3 * side / 3)
			}
			c.square(sx, sy, side, angle)
		}
	}
	var b strings.Builder
	for y := 0; y < c.h; y += 4 {
		for x := 0; x < c.w; x += 2 {
			bits := 0
			for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if c.get(x+p[0], y+p[1]) != 0 {
					bits |= 1 << i
				}
			}
			b.WriteRune(rune(0x2800 + bits))
		}
		if y != c.h-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// lolwutSkyline is LOLWUT 6's drawing: skyscrapers in two grays behind
// black ones with lit windows, each pixel a space in a color escape.
func lolwutSkyline(cols, rows int) string {
	c := newCanvas(cols, rows, 3)
	building := func(xoff, w, h int, windows bool, color byte) {
		start := c.h - 1
		end := start - h + 1
		for y := start; y >= end; y-- {
			for x := xoff; x < xoff+w; x++ {
				if y == end && (x <= xoff+1 || x >= xoff+w-2) {
					continue // the roof is narrower
				}
				col := color
				if windows && x > xoff+1 && x < xoff+w-2 && y > end+1 && y < start-1 {
					relx, rely := x-(xoff+1), y-(end+1)
					if relx/2%2 != 0 && rely%2 != 0 {
						for col = byte(1 + rand.IntN(2)); col == color; col = byte(1 + rand.IntN(2)) {
						}
						if relx%2 != 0 {
							col = c.get(x-1, y)
						}
					}
				}
				c.set(x, y, col)
			}
		}
	}
	for color := byte(2); color >= 1; color-- {
		for off := -10; off < c.w; {
			off += rand.IntN(8)
			w := 10 + rand.IntN(9)
			h := c.h/2 + rand.IntN(c.h)/2
			if color == 1 {
				h = c.h/2 + rand.IntN(c.h)/3
			}
			building(off, w, h, false, color)
			if color == 2 {
				off += w / 2
			} else {
				off += w + 1
			}
		}
	}
	for off := -10; off < c.w; {
		off += rand.IntN(8)
		w := 5 + rand.IntN(14)
		if w%4 != 0 {
			w += w % 3
		}
		building(off, w, c.h/3+rand.IntN(c.h)/2, true, 0)
		off += w + 5
	}
	escapes := [4]string{"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"}
	var b strings.Builder
	for y := range c.h {
		for x := range c.w {
			b.WriteString("\x1b[" + escapes[c.get(x, y)&3] + " \x1b[0m")
		}
		if y != c.h-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
