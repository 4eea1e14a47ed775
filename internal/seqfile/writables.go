package seqfile

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writable turns one serialized Writable into its Java toString.
type writable func(b []byte) (string, error)

// writableOf returns the reader of Java class name's serialized form.
func writableOf(class string) (writable, error) {
	if w, ok := writables[class]; ok {
		return w, nil
	}
	return nil, fmt.Errorf("sequence file: records of class %s, which strata fs cannot show (it shows Text, "+
		"the numeric Writables, BooleanWritable, BytesWritable, NullWritable and MD5Hash)", class)
}

const hio = "org.apache.hadoop.io."

var writables = map[string]writable{
	hio + "Text": func(b []byte) (string, error) {
		r := bytes.NewReader(b)
		n, err := readVLong(r)
		if err != nil || n < 0 || n > int64(r.Len()) {
			return "", fmt.Errorf("a Text of %d bytes in %d", n, len(b))
		}
		return javaString(b[len(b)-r.Len():][:n]), nil
	},
	hio + "IntWritable":     fixed(4, func(b []byte) string { return strconv.Itoa(int(int32(binary.BigEndian.Uint32(b)))) }),
	hio + "LongWritable":    fixed(8, func(b []byte) string { return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10) }),
	hio + "ShortWritable":   fixed(2, func(b []byte) string { return strconv.Itoa(int(int16(binary.BigEndian.Uint16(b)))) }),
	hio + "ByteWritable":    fixed(1, func(b []byte) string { return strconv.Itoa(int(int8(b[0]))) }),
	hio + "BooleanWritable": fixed(1, func(b []byte) string { return strconv.FormatBool(b[0] != 0) }),
	hio + "FloatWritable": fixed(4, func(b []byte) string {
		return JavaDouble(float64(math.Float32frombits(binary.BigEndian.Uint32(b))), 32)
	}),
	hio + "DoubleWritable": fixed(8, func(b []byte) string {
		return JavaDouble(math.Float64frombits(binary.BigEndian.Uint64(b)), 64)
	}),
	hio + "VIntWritable":  vlong,
	hio + "VLongWritable": vlong,
	hio + "NullWritable":  func([]byte) (string, error) { return "(null)", nil },
	hio + "MD5Hash":       fixed(16, hex.EncodeToString),
	hio + "BytesWritable": func(b []byte) (string, error) {
		if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
			return "", fmt.Errorf("a BytesWritable of %d bytes", len(b))
		}
		var s strings.Builder
		for i, c := range b[4:] {
			if i > 0 {
				s.WriteByte(' ')
			}
			fmt.Fprintf(&s, "%02x", c)
		}
		return s.String(), nil
	},
}

func fixed(n int, f func([]byte) string) writable {
	return func(b []byte) (string, error) {
		if len(b) != n {
			return "", fmt.Errorf("%d bytes where %d are expected", len(b), n)
		}
		return f(b), nil
	}
}

func vlong(b []byte) (string, error) {
	r := bytes.NewReader(b)
	v, err := readVLong(r)
	if err != nil || r.Len() != 0 {
		return "", fmt.Errorf("a malformed variable-length integer")
	}
	return strconv.FormatInt(v, 10), nil
}

// javaString is UTF-8 bytes as Java decodes them with replacement: each
// malformed sequence becomes U+FFFD.
func javaString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		s.WriteRune(r) // utf8.RuneError is U+FFFD
		b = b[n:]
	}
	return s.String()
}

// JavaDouble formats f as Java's Double.toString (bits 64) or
// Float.toString (bits 32) does: the shortest digits that read back as f,
// in plain notation with at least one digit after the point from 10^-3 up
// to 10^7, else as d.dddE<exponent>. NB: Java 17's digits are not always
// the shortest (JDK-4511638, mended in Java 19), a float's more often than
// a double's: there such a value shows here with fewer digits than
// hadoop fs -text shows it, the same number.
func JavaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// NB: Java gives the smallest denormals two digits.
	switch {
	case f == math.SmallestNonzeroFloat64:
		return sign + "4.9E-324"
	case f == math.SmallestNonzeroFloat32 && bits == 32:
		return sign + "1.4E-45"
	}
	e := strconv.FormatFloat(f, 'e', -1, bits) // d.ddde±XX
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 {
		var whole, frac string
		if exp >= 0 {
			if len(digits) <= exp+1 {
				whole, frac = digits+strings.Repeat("0", exp+1-len(digits)), "0"
			} else {
				whole, frac = digits[:exp+1], digits[exp+1:]
			}
		} else {
			whole, frac = "0", strings.Repeat("0", -exp-1)+digits
		}
		return sign + whole + "." + frac
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}
