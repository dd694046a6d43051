package guest

import (
	"strconv"
	"unicode/utf8"
)

// The SDK formats messages itself, so that a tool links fmt (hundreds of
// KB of code and its initialisation) only if the tool's own code uses it.
//
// sprintf is fmt.Sprintf for the verbs and operands tool messages use:
// %v %s %q %d %t %x %X %c %g %e %f and %%, with an optional width (padded
// with spaces, or zeros after a 0 flag; left-aligned after a - flag) and
// precision (%e %f %g and %s); the operands nil, string, []byte, error,
// Stringer (String() string), bool, every integer and float type. An
// operand of another type, as with a verb that does not apply to it, is
// written %!verb(unsupported); a missing one %!verb(MISSING), extra ones
// %!(EXTRA). Format with fmt.Sprintf in the tool for anything else.
func sprintf(format string, args ...any) string {
	b := make([]byte, 0, len(format)+16*len(args))
	argi := 0
	for i := 0; i < len(format); {
		c := format[i]
		if c != '%' {
			j := i + 1
			for j < len(format) && format[j] != '%' {
				j++
			}
			b = append(b, format[i:j]...)
			i = j
			continue
		}
		i++
		var minus, zero, plus bool
	flags:
		for ; i < len(format); i++ {
			switch format[i] {
			case '-':
				minus = true
			case '0':
				zero = true
			case '+':
				plus = true
			default:
				break flags
			}
		}
		width, prec := -1, -1
		if i < len(format) && format[i] >= '0' && format[i] <= '9' {
			width = 0
			for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				width = width*10 + int(format[i]-'0')
			}
		}
		if i < len(format) && format[i] == '.' {
			prec = 0
			for i++; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				prec = prec*10 + int(format[i]-'0')
			}
		}
		if i >= len(format) {
			b = append(b, "%!(NOVERB)"...)
			break
		}
		verb := format[i]
		i++
		if verb == '%' {
			b = append(b, '%')
			continue
		}
		if argi >= len(args) {
			b = append(b, '%', '!', verb)
			b = append(b, "(MISSING)"...)
			continue
		}
		s, ok := formatArg(args[argi], verb, prec, plus)
		argi++
		if !ok {
			b = append(b, '%', '!', verb)
			b = append(b, "(unsupported)"...)
			continue
		}
		if n := utf8.RuneCountInString(s); width > n {
			pad := byte(' ')
			if zero && !minus && verb != 's' && verb != 'q' && verb != 'v' {
				pad = '0'
			}
			if minus {
				b = append(b, s...)
				for ; n < width; n++ {
					b = append(b, ' ')
				}
				continue
			}
			if pad == '0' && len(s) > 0 && (s[0] == '-' || s[0] == '+') {
				b = append(b, s[0])
				s = s[1:]
			}
			for ; n < width; n++ {
				b = append(b, pad)
			}
		}
		b = append(b, s...)
	}
	if argi < len(args) {
		b = append(b, "%!(EXTRA)"...)
	}
	return string(b)
}

// sprint formats v as fmt.Sprint(v) does for the operands sprintf
// supports, and as "(unsupported)" otherwise.
func sprint(v any) string {
	if s, ok := formatArg(v, 'v', -1, false); ok {
		return s
	}
	return "(unsupported)"
}

// formatArg formats one operand for verb, reporting false when the SDK
// does not format that operand with that verb.
func formatArg(arg any, verb byte, prec int, plus bool) (string, bool) {
	switch a := arg.(type) {
	case nil:
		if verb == 'v' || verb == 's' {
			return "<nil>", true
		}
		return "", false
	case string:
		return formatString(a, verb, prec)
	case []byte:
		return formatString(string(a), verb, prec)
	case error:
		return formatString(a.Error(), verb, prec)
	case interface{ String() string }:
		return formatString(a.String(), verb, prec)
	case bool:
		if verb == 'v' || verb == 't' {
			return strconv.FormatBool(a), true
		}
		return "", false
	case int:
		return formatInt(int64(a), verb, plus)
	case int8:
		return formatInt(int64(a), verb, plus)
	case int16:
		return formatInt(int64(a), verb, plus)
	case int32:
		return formatInt(int64(a), verb, plus)
	case int64:
		return formatInt(a, verb, plus)
	case uint:
		return formatUint(uint64(a), verb, plus)
	case uint8:
		return formatUint(uint64(a), verb, plus)
	case uint16:
		return formatUint(uint64(a), verb, plus)
	case uint32:
		return formatUint(uint64(a), verb, plus)
	case uint64:
		return formatUint(a, verb, plus)
	case uintptr:
		return formatUint(uint64(a), verb, plus)
	case float32:
		return formatFloat(float64(a), 32, verb, prec, plus)
	case float64:
		return formatFloat(a, 64, verb, prec, plus)
	}
	return "", false
}

func formatString(s string, verb byte, prec int) (string, bool) {
	switch verb {
	case 'v', 's':
		if prec >= 0 {
			n := 0
			for i := range s {
				if n == prec {
					return s[:i], true
				}
				n++
			}
		}
		return s, true
	case 'q':
		return strconv.Quote(s), true
	case 'x', 'X':
		const lower, upper = "0123456789abcdef", "0123456789ABCDEF"
		digits := lower
		if verb == 'X' {
			digits = upper
		}
		b := make([]byte, 0, 2*len(s))
		for i := 0; i < len(s); i++ {
			b = append(b, digits[s[i]>>4], digits[s[i]&0xF])
		}
		return string(b), true
	}
	return "", false
}

func formatInt(i int64, verb byte, plus bool) (string, bool) {
	sign := ""
	if plus && i >= 0 {
		sign = "+"
	}
	switch verb {
	case 'v', 'd':
		return sign + strconv.FormatInt(i, 10), true
	case 'x':
		return sign + strconv.FormatInt(i, 16), true
	case 'X':
		return sign + upperHex(strconv.FormatInt(i, 16)), true
	case 'c':
		return string(rune(i)), true
	case 'q':
		return strconv.QuoteRune(rune(i)), true
	}
	return "", false
}

func formatUint(u uint64, verb byte, plus bool) (string, bool) {
	sign := ""
	if plus {
		sign = "+"
	}
	switch verb {
	case 'v', 'd':
		return sign + strconv.FormatUint(u, 10), true
	case 'x':
		return sign + strconv.FormatUint(u, 16), true
	case 'X':
		return sign + upperHex(strconv.FormatUint(u, 16)), true
	case 'c':
		return string(rune(u)), true
	case 'q':
		return strconv.QuoteRune(rune(u)), true
	}
	return "", false
}

func upperHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func formatFloat(f float64, bits int, verb byte, prec int, plus bool) (string, bool) {
	var s string
	switch verb {
	case 'v', 'g':
		s = strconv.FormatFloat(f, 'g', prec, bits)
	case 'e':
		if prec < 0 {
			prec = 6
		}
		s = strconv.FormatFloat(f, 'e', prec, bits)
	case 'f':
		if prec < 0 {
			prec = 6
		}
		s = strconv.FormatFloat(f, 'f', prec, bits)
	default:
		return "", false
	}
	if plus && s[0] != '-' && s[0] != '+' {
		s = "+" + s
	}
	return s, true
}
