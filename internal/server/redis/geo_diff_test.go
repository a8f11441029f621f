package redis

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm/vfs"
)

// geoSessions are the geo sessions of the differential test, each run in
// RESP2 and RESP3 (geoDiffSessions): every command, option, unit and
// error, poles, the antimeridian, scores no GEOADD writes, huge radii,
// COUNT with and without ANY, STORE and STOREDIST.
var geoSessions = []respSession{
	{name: "geoadd", in: mb("GEOADD", "ga:a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania") +
		mb("GEOADD", "ga:a", "13.361389", "38.115556", "Palermo") + mb("GEOADD", "ga:a", "CH", "13.4", "38.1", "Palermo", "1", "1", "x") +
		mb("GEOADD", "ga:a", "NX", "0", "0", "Palermo", "2", "2", "y") + mb("GEOADD", "ga:a", "XX", "CH", "3", "3", "y", "4", "4", "z") +
		mb("GEOADD", "ga:a", "xx", "nx", "1", "1", "a") + mb("GEOADD", "ga:a", "GT", "1", "1", "a") + mb("GEOADD", "ga:a", "CH", "CH", "CH") +
		mb("GEOADD", "ga:a", "1", "1") + mb("GEOADD", "ga:a", "1", "1", "a", "2") + mb("GEOADD", "ga:a", "181", "1", "a") +
		mb("GEOADD", "ga:a", "1", "85.06", "a") + mb("GEOADD", "ga:a", "-180.000001", "-85.05112878", "a") + mb("GEOADD", "ga:a", "x", "1", "a") +
		mb("GEOADD", "ga:a", "1", "nan", "a") + mb("GEOADD", "ga:a", "inf", "1", "a") + mb("GEOADD", "ga:a", "1", "-inf", "a") +
		mb("GEOADD", "ga:a", "1", "1", "ok", "500", "1", "bad") + mb("ZRANGE", "ga:a", "0", "-1", "WITHSCORES") +
		mb("GEOADD", "ga:x", "XX", "1", "1", "a") + mb("EXISTS", "ga:x") +
		mb("GEOADD", "ga:p", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "180", "-85.05112878", "se", "-180", "85.05112878", "nw",
			"0", "0", "origin", "-0", "-0", "negzero", "179.9999999", "0", "east", "-179.9999999", "0", "west", "0x10", "1e1", "hex") +
		mb("ZRANGE", "ga:p", "0", "-1", "WITHSCORES") + mb("GEOPOS", "ga:p", "ne", "sw", "se", "nw", "origin", "negzero", "east", "west", "hex", "nope") +
		mb("GEOHASH", "ga:p", "ne", "sw", "se", "nw", "origin", "negzero", "east", "west", "hex", "nope") + mb("TYPE", "ga:p") + mb("OBJECT", "ENCODING", "ga:p")},
	{name: "geopos geohash geodist", in: mb("GEOADD", "gp:a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "-122.27652", "37.805186", "Oakland") +
		mb("GEOPOS", "gp:a", "Palermo", "Catania", "nope", "Oakland") + mb("GEOPOS", "gp:a") + mb("GEOPOS", "gp:nope", "a", "b") + mb("GEOHASH", "gp:a") +
		mb("GEOHASH", "gp:a", "Palermo", "Catania", "nope", "Oakland") + mb("GEOHASH", "gp:nope", "a") +
		mb("GEODIST", "gp:a", "Palermo", "Catania") + mb("GEODIST", "gp:a", "Palermo", "Catania", "km") + mb("GEODIST", "gp:a", "Palermo", "Catania", "MI") +
		mb("GEODIST", "gp:a", "Palermo", "Oakland", "ft") + mb("GEODIST", "gp:a", "Palermo", "Oakland", "M") + mb("GEODIST", "gp:a", "Palermo", "Palermo") +
		mb("GEODIST", "gp:a", "Palermo", "nope") + mb("GEODIST", "gp:nope", "a", "b") + mb("GEODIST", "gp:a", "Palermo", "Catania", "yards") +
		mb("GEODIST", "gp:a", "Palermo", "Catania", "km", "x") + mb("GEODIST", "gp:nope", "a", "b", "furlong") + mb("GEODIST", "gp:a", "a") +
		mb("ZADD", "gp:w", "4503599627370495", "max", "1e18", "big", "-1", "neg", "1.9", "frac", "0", "zero", "inf", "pinf", "-inf", "ninf",
			"4503599627370496", "p52", "0.5", "half", "123456789.25", "q") +
		mb("GEOPOS", "gp:w", "max", "big", "neg", "frac", "zero", "pinf", "ninf", "p52", "half", "q") +
		mb("GEOHASH", "gp:w", "max", "big", "neg", "frac", "zero", "pinf", "ninf", "p52", "half", "q") +
		mb("GEODIST", "gp:w", "max", "big") + mb("GEODIST", "gp:w", "ninf", "pinf", "km") + mb("GEODIST", "gp:w", "q", "max", "mi")},
	{name: "georadius", in: mb("GEOADD", "gr:a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "12.5", "41.9", "Rome",
		"9.19", "45.4642", "Milan", "14.2681", "40.8518", "Naples", "2.3522", "48.8566", "Paris") +
		mb("GEORADIUS", "gr:a", "15", "37", "200", "km") + mb("GEORADIUS", "gr:a", "15", "37", "200", "km", "WITHDIST") +
		mb("GEORADIUS", "gr:a", "15", "37", "200", "km", "WITHCOORD", "WITHDIST", "WITHHASH") + mb("GEORADIUS", "gr:a", "15", "37", "1000", "km", "ASC") +
		mb("GEORADIUS", "gr:a", "15", "37", "1000", "km", "DESC", "WITHDIST") + mb("GEORADIUS", "gr:a", "15", "37", "1000", "km", "COUNT", "2") +
		mb("GEORADIUS", "gr:a", "15", "37", "1000", "km", "COUNT", "2", "DESC") + mb("GEORADIUS", "gr:a", "15", "37", "1000", "km", "COUNT", "2", "ANY") +
		mb("GEORADIUS", "gr:a", "15", "37", "1000", "km", "COUNT", "3", "ANY", "ASC") + mb("GEORADIUS", "gr:a", "15", "37", "2000", "km", "COUNT", "100") +
		mb("GEORADIUS", "gr:a", "15", "37", "621.371", "mi", "WITHDIST") + mb("GEORADIUS", "gr:a", "15", "37", "656168", "ft", "WITHDIST") +
		mb("GEORADIUS", "gr:a", "15", "37", "200000", "M", "withdist", "withcoord") + mb("GEORADIUS", "gr:a", "15", "37", "0", "m") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "m") + mb("GEORADIUS", "gr:a", "15", "37", "50000", "km", "WITHDIST") +
		mb("GEORADIUS", "gr:a", "15", "37", "1e30", "km", "WITHDIST") + mb("GEORADIUS", "gr:a", "15", "37", "inf", "km", "WITHDIST") +
		mb("GEORADIUS", "gr:nope", "15", "37", "200", "km") + mb("GEORADIUS", "gr:a", "15", "37", "-1", "km") + mb("GEORADIUS", "gr:a", "15", "37", "x", "km") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "yd") + mb("GEORADIUS", "gr:a", "200", "37", "1", "km") + mb("GEORADIUS", "gr:a", "x", "37", "1", "km") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "COUNT") + mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "COUNT", "0") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "COUNT", "-3") + mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "COUNT", "x") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "ANY") + mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "FOO") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "STORE") + mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "WITHDIST", "STORE", "gr:d") +
		mb("GEORADIUS", "gr:a", "15", "37", "1", "km", "FROMMEMBER", "Palermo") + mb("GEORADIUS", "gr:nope", "15", "37", "x", "km") +
		mb("GEORADIUS", "gr:nope", "15", "37", "1", "km", "FOO") + mb("GEORADIUS", "gr:nope", "15", "37", "1", "km", "ANY") +
		mb("GEORADIUS_RO", "gr:a", "15", "37", "200", "km", "WITHDIST", "ASC") + mb("GEORADIUS_RO", "gr:a", "15", "37", "200", "km", "STORE", "gr:d") +
		mb("GEORADIUS_RO", "gr:a", "15", "37", "200", "km", "STOREDIST", "gr:d") + mb("GEORADIUS_RO", "gr:nope", "15", "37", "200", "km")},
	{name: "georadiusbymember", in: mb("GEOADD", "gm:a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "12.5", "41.9", "Rome",
		"9.19", "45.4642", "Milan", "14.2681", "40.8518", "Naples") +
		mb("GEORADIUSBYMEMBER", "gm:a", "Palermo", "300", "km") + mb("GEORADIUSBYMEMBER", "gm:a", "Palermo", "300", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "DESC") +
		mb("GEORADIUSBYMEMBER", "gm:a", "Rome", "1000", "km", "COUNT", "3", "WITHDIST") + mb("GEORADIUSBYMEMBER", "gm:a", "Rome", "0", "km") +
		mb("GEORADIUSBYMEMBER", "gm:a", "nope", "100", "km") + mb("GEORADIUSBYMEMBER", "gm:a", "nope", "x", "km") +
		mb("GEORADIUSBYMEMBER", "gm:a", "Rome", "x", "km") + mb("GEORADIUSBYMEMBER", "gm:a", "Rome", "1", "parsec") +
		mb("GEORADIUSBYMEMBER", "gm:nope", "Rome", "x", "parsec") + mb("GEORADIUSBYMEMBER", "gm:nope", "Rome", "1", "km", "BAD") +
		mb("GEORADIUSBYMEMBER", "gm:nope", "Rome", "1", "km", "ANY") + mb("GEORADIUSBYMEMBER_RO", "gm:a", "Rome", "500", "km", "WITHDIST") +
		mb("GEORADIUSBYMEMBER_RO", "gm:a", "Rome", "500", "km", "STORE", "gm:d") + mb("GEORADIUSBYMEMBER_RO", "gm:a", "nope", "500", "km")},
	{name: "geosearch", in: mb("GEOADD", "gs:a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "12.5", "41.9", "Rome",
		"9.19", "45.4642", "Milan", "14.2681", "40.8518", "Naples", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Palermo", "BYRADIUS", "500", "km", "WITHDIST", "WITHCOORD", "WITHHASH") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC", "WITHCOORD", "WITHDIST", "WITHHASH") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37", "BYBOX", "800", "1200", "km", "DESC", "WITHDIST") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Rome", "BYBOX", "1000", "100", "mi", "COUNT", "2") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Rome", "BYBOX", "3000", "3000", "km", "COUNT", "2", "ANY") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Rome", "BYBOX", "0", "0", "km") + mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Rome", "BYBOX", "1e10", "1e10", "ft", "WITHDIST") +
		mb("GEOSEARCH", "gs:a", "BYRADIUS", "200", "km", "FROMLONLAT", "15", "37") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37") +
		mb("GEOSEARCH", "gs:a", "BYRADIUS", "200", "km") + mb("geosearch", "gs:a", "BYRADIUS", "200", "km", "withdist") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "BYBOX", "1", "1", "km") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37", "FROMMEMBER", "Rome", "BYRADIUS", "1", "km") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Rome", "FROMMEMBER", "Milan", "BYRADIUS", "100", "km") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "Rome", "FROMLONLAT", "1", "1", "BYRADIUS", "100", "km") +
		mb("GEOSEARCH", "gs:a", "FROMMEMBER", "nope", "BYRADIUS", "100", "km") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "200", "0", "BYRADIUS", "100", "km") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYRADIUS", "-1", "km") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYBOX", "-1", "1", "km") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYBOX", "x", "y", "km") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYBOX", "1", "y", "km") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYBOX", "1", "1", "au") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYBOX", "1", "1") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km", "STORE", "gs:d") +
		mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km", "STOREDIST") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km", "ANY") +
		mb("GEOSEARCH", "gs:nope", "FROMMEMBER", "x", "BYRADIUS", "1", "km") + mb("GEOSEARCH", "gs:nope", "FROMMEMBER", "x", "BYRADIUS", "x", "km") +
		mb("GEOSEARCH", "gs:nope", "FROMMEMBER", "x") + mb("GEOSEARCH", "gs:a", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "1", "COUNT", "5")},
	{name: "geo store", in: mb("GEOADD", "{gt}a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "12.5", "41.9", "Rome") +
		mb("GEORADIUS", "{gt}a", "15", "37", "200", "km", "STORE", "{gt}d") + mb("ZRANGE", "{gt}d", "0", "-1", "WITHSCORES") +
		mb("GEORADIUS", "{gt}a", "15", "37", "2000", "km", "STOREDIST", "{gt}d") + mb("ZRANGE", "{gt}d", "0", "-1", "WITHSCORES") +
		mb("GEORADIUS", "{gt}a", "15", "37", "2000", "mi", "STOREDIST", "{gt}d", "COUNT", "1") + mb("ZRANGE", "{gt}d", "0", "-1", "WITHSCORES") +
		mb("GEORADIUS", "{gt}a", "15", "37", "2000", "km", "STORE", "{gt}d", "STOREDIST", "{gt}e") + mb("EXISTS", "{gt}d", "{gt}e") +
		mb("ZRANGE", "{gt}e", "0", "-1", "WITHSCORES") + mb("GEORADIUS", "{gt}a", "15", "37", "1", "m", "STORE", "{gt}e") + mb("EXISTS", "{gt}e") +
		mb("SET", "{gt}s", "x") + mb("GEORADIUS", "{gt}a", "15", "37", "200", "km", "STORE", "{gt}s") + mb("TYPE", "{gt}s") +
		mb("GEORADIUS", "{gt}nope", "15", "37", "200", "km", "STORE", "{gt}s") + mb("EXISTS", "{gt}s") +
		mb("GEORADIUSBYMEMBER", "{gt}a", "Rome", "800", "km", "STOREDIST", "{gt}m", "DESC") + mb("ZRANGE", "{gt}m", "0", "-1", "WITHSCORES") +
		mb("GEORADIUSBYMEMBER", "{gt}nope", "Rome", "x", "km", "STORE", "{gt}m") + mb("EXISTS", "{gt}m") +
		mb("GEOSEARCHSTORE", "{gt}g", "{gt}a", "FROMLONLAT", "15", "37", "BYBOX", "1000", "1000", "km") + mb("ZRANGE", "{gt}g", "0", "-1", "WITHSCORES") +
		mb("GEOSEARCHSTORE", "{gt}g", "{gt}a", "FROMLONLAT", "15", "37", "BYBOX", "1000", "1000", "km", "STOREDIST", "COUNT", "1") +
		mb("ZRANGE", "{gt}g", "0", "-1", "WITHSCORES") + mb("OBJECT", "ENCODING", "{gt}g") +
		mb("GEOSEARCHSTORE", "{gt}g", "{gt}a", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m") + mb("EXISTS", "{gt}g") +
		mb("GEOSEARCHSTORE", "{gt}g", "{gt}a", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "WITHDIST") +
		mb("GEOSEARCHSTORE", "{gt}g", "{gt}a", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "STORE", "{gt}x") +
		mb("GEOSEARCHSTORE", "{gt}g", "{gt}nope", "FROMMEMBER", "x", "BYRADIUS", "1", "m") +
		mb("GEOSEARCHSTORE", "{gt}a", "{gt}a", "FROMMEMBER", "Rome", "BYRADIUS", "300", "km", "STOREDIST") + mb("ZRANGE", "{gt}a", "0", "-1", "WITHSCORES")},
	{name: "geo ties and count", in: geoTieSession("gc:a")},
	{name: "geo poles antimeridian", in: mb("GEOADD", "gq:a", "179.9", "0", "e1", "-179.9", "0", "w1", "179.5", "10", "e2", "-179.5", "-10", "w2",
		"0", "85", "n1", "90", "85", "n2", "-90", "85", "n3", "180", "85.05112878", "n4", "0", "-85", "s1", "180", "-85", "s2", "-179.99", "84.9", "n5") +
		mb("GEORADIUS", "gq:a", "180", "0", "100", "km", "WITHDIST", "ASC") + mb("GEORADIUS", "gq:a", "-180", "0", "100", "km", "WITHDIST", "ASC") +
		mb("GEOSEARCH", "gq:a", "FROMLONLAT", "179.99", "5", "BYBOX", "3000", "3000", "km", "WITHDIST", "ASC") +
		mb("GEORADIUS", "gq:a", "0", "85.05", "1000", "km", "WITHDIST", "ASC") + mb("GEORADIUS", "gq:a", "0", "85.05", "5000", "km", "WITHDIST", "ASC") +
		mb("GEORADIUS", "gq:a", "0", "-85.05", "1000", "km", "WITHDIST", "WITHCOORD") + mb("GEOSEARCH", "gq:a", "FROMMEMBER", "n4", "BYRADIUS", "3000", "km", "WITHDIST") +
		mb("GEOSEARCH", "gq:a", "FROMMEMBER", "n4", "BYBOX", "1000", "1000", "km", "WITHDIST") + mb("GEODIST", "gq:a", "e1", "w1", "km") +
		mb("GEODIST", "gq:a", "n1", "s1", "km") + mb("GEORADIUS", "gq:a", "0", "0", "20000", "km", "WITHDIST") +
		mb("GEORADIUS", "gq:a", "0", "0", "5000", "km") + mb("GEORADIUS", "gq:a", "100", "70", "3000", "km", "WITHDIST") +
		mb("GEORADIUS", "gq:a", "-100", "-82", "3000", "km", "WITHDIST") + mb("GEOSEARCH", "gq:a", "FROMLONLAT", "-179.9", "-84", "BYBOX", "500", "4000", "km")},
	{name: "geo wrong type", in: mb("SET", "gw:s", "v") + mb("GEOADD", "gw:s", "1", "1", "a") + mb("GEOADD", "gw:s", "500", "1", "a") +
		mb("GEOADD", "gw:s", "1", "1") + mb("GEOPOS", "gw:s", "a") + mb("GEOHASH", "gw:s", "a") + mb("GEODIST", "gw:s", "a", "b") +
		mb("GEODIST", "gw:s", "a", "b", "yd") + mb("GEORADIUS", "gw:s", "500", "1", "1", "km") + mb("GEORADIUSBYMEMBER", "gw:s", "a", "1", "km") +
		mb("GEOSEARCH", "gw:s", "FOO") + mb("GEOSEARCHSTORE", "gw:d", "gw:s", "FOO") + mb("GEORADIUS_RO", "gw:s", "1", "1", "1", "km") +
		mb("GEORADIUSBYMEMBER_RO", "gw:s", "a", "1", "km") + mb("GEOADD", "gw:z", "1", "1", "a") + mb("SET", "gw:x", "y") +
		mb("GEOSEARCHSTORE", "gw:x", "gw:z", "FROMMEMBER", "a", "BYRADIUS", "1", "km") + mb("TYPE", "gw:x")},
	{name: "geo arity", in: mb("GEOADD", "ga:r", "1", "1") + mb("GEODIST", "ga:r", "a") + mb("GEOHASH") + mb("GEOPOS") +
		mb("GEORADIUS", "ga:r", "1", "1", "1") + mb("GEORADIUSBYMEMBER", "ga:r", "a", "1") + mb("GEOSEARCH", "ga:r", "FROMMEMBER", "a", "BYRADIUS", "1") +
		mb("GEOSEARCHSTORE", "ga:d", "ga:r", "FROMMEMBER", "a", "BYRADIUS", "1")},
	{name: "geo big set", in: geoBigSession("gb:a", 400)},
	{name: "geo multi", in: "MULTI\r\nGEOADD gx:a 1 1 a 2 2 b\r\nGEORADIUS gx:a 1 1 500 km WITHDIST\r\nGEOPOS gx:a a\r\nEXEC\r\n" +
		"GEOADD gx:a 1 1\r\n"},
}

// geoTieSession has many members at one position (equal distances), so
// that the order among ties, which Redis's sorts decide, shows: the
// stable sort of a full reply and the partial quicksort of COUNT.
func geoTieSession(key string) string {
	args := []string{"GEOADD", key}
	for i := range 60 {
		lon := "10"
		if i%3 == 0 {
			lon = "10.001"
		} else if i%5 == 0 {
			lon = "9.999"
		}
		args = append(args, lon, "10", "m"+strconv.Itoa(i*7%60))
	}
	var b strings.Builder
	b.WriteString(mb(args...))
	for _, c := range []string{"1", "3", "7", "8", "20", "41", "45", "59", "60", "100"} {
		b.WriteString(mb("GEORADIUS", key, "10", "10", "100", "km", "COUNT", c))
		b.WriteString(mb("GEORADIUS", key, "10", "10", "100", "km", "COUNT", c, "DESC", "WITHDIST"))
		b.WriteString(mb("GEOSEARCH", key, "FROMLONLAT", "10.0005", "10", "BYRADIUS", "100", "km", "COUNT", c, "ANY"))
		b.WriteString(mb("GEOSEARCH", key, "FROMLONLAT", "10.0005", "10", "BYRADIUS", "100", "km", "COUNT", c, "ANY", "DESC"))
	}
	b.WriteString(mb("GEORADIUS", key, "10", "10", "100", "km") + mb("GEORADIUS", key, "10", "10", "100", "km", "ASC") +
		mb("GEORADIUS", key, "10", "10", "100", "km", "DESC"))
	return b.String()
}

// geoBigSession fills key past the listpack limit with points on a grid
// and searches it every way.
func geoBigSession(key string, n int) string {
	args := []string{"GEOADD", key}
	for i := range n {
		lon := strconv.FormatFloat(-20+float64(i%20)*2.05, 'f', 4, 64)
		lat := strconv.FormatFloat(30+float64(i/20)*1.1, 'f', 4, 64)
		args = append(args, lon, lat, "p"+strconv.Itoa(i))
	}
	var b strings.Builder
	b.WriteString(mb(args...))
	b.WriteString(mb("OBJECT", "ENCODING", key) + mb("ZCARD", key) +
		mb("GEORADIUS", key, "0", "40", "500", "km", "WITHDIST", "WITHHASH", "WITHCOORD") +
		mb("GEORADIUS", key, "0", "40", "800", "km", "COUNT", "10", "DESC") + mb("GEORADIUS", key, "0", "40", "800", "km", "COUNT", "10", "ANY") +
		mb("GEOSEARCH", key, "FROMMEMBER", "p155", "BYBOX", "900", "300", "km", "WITHDIST") +
		mb("GEOSEARCH", key, "FROMMEMBER", "p155", "BYBOX", "300", "900", "mi", "WITHDIST", "ASC") +
		mb("GEOSEARCH", key, "FROMLONLAT", "-5", "42", "BYRADIUS", "3000", "km", "COUNT", "50", "ANY", "ASC", "WITHDIST") +
		mb("GEOSEARCHSTORE", key+":d", key, "FROMLONLAT", "-5", "42", "BYRADIUS", "300", "km", "STOREDIST") + mb("OBJECT", "ENCODING", key+":d") +
		mb("ZRANGE", key+":d", "0", "-1", "WITHSCORES") + mb("GEOSEARCHSTORE", key+":e", key, "FROMLONLAT", "-5", "42", "BYRADIUS", "3000", "km") +
		mb("OBJECT", "ENCODING", key+":e") + mb("ZCARD", key+":e") + mb("GEOHASH", key, "p0", "p399", "p200") + mb("GEOPOS", key, "p0", "p399") +
		mb("GEODIST", key, "p0", "p399", "km"))
	return b.String()
}

func geoDiffSessions() []respSession { return inRESP2And3(geoSessions) }

func TestGeoDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})
	for _, s := range geoDiffSessions() {
		t.Run(s.name, func(t *testing.T) {
			want := runRESPSession(redisAddr, s)
			got := runRESPSession(rs.respAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
			}
			if !sameRESPReplies(s, got, want) || got.closed != want.closed {
				for i := range min(len(got.replies), len(want.replies)) {
					if got.replies[i] != want.replies[i] {
						t.Errorf("reply %d (command %d): redis %q, minikv %q", i, i+s.skip, clip(want.replies[i]), clip(got.replies[i]))
						break
					}
				}
				t.Errorf("session %q differs (%d vs %d replies)", s.name, len(want.replies), len(got.replies))
			}
		})
	}
}

// The geo commands' keyspace events (GEOADD publishes ZADD's, the stores
// georadiusstore and geosearchstore, or del when nothing is stored), key
// misses included, and the keys COMMAND GETKEYS finds in their calls.
func init() {
	notifySessions = append(notifySessions,
		notifySession{name: "geo", in: mb("GEOADD", "g", "1", "1", "a", "2", "2", "b") + mb("GEOADD", "g", "1", "1", "a") +
			mb("GEOADD", "g", "CH", "1.5", "1", "a") + mb("GEOADD", "g", "500", "1", "x") + mb("GEOADD", "n", "XX", "1", "1", "a") +
			mb("GEORADIUS", "g", "1", "1", "500", "km", "STORE", "d") + mb("GEORADIUS", "g", "1", "1", "500", "km", "STOREDIST", "d") +
			mb("GEORADIUS", "g", "50", "50", "1", "km", "STORE", "d") + mb("GEORADIUS", "g", "50", "50", "1", "km", "STORE", "d") +
			mb("GEOSEARCHSTORE", "e", "g", "FROMMEMBER", "a", "BYRADIUS", "500", "km") + mb("GEOSEARCHSTORE", "e", "nope", "FROMMEMBER", "a", "BYRADIUS", "1", "km") +
			mb("GEORADIUSBYMEMBER", "g", "b", "1000", "km", "STORE", "f") + mb("GEORADIUSBYMEMBER", "nope", "b", "1000", "km", "STORE", "f")},
		notifySession{name: "geo key misses", flags: "Em", in: mb("GEOPOS", "nope", "a") + mb("GEOHASH", "nope", "a") + mb("GEODIST", "nope", "a", "b") +
			mb("GEORADIUS", "nope", "1", "1", "1", "km") + mb("GEORADIUS_RO", "nope", "1", "1", "1", "km") + mb("GEOSEARCH", "nope", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km") +
			mb("GEOSEARCHSTORE", "d", "nope", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km") + mb("GEORADIUSBYMEMBER", "nope", "a", "1", "km", "STORE", "d")},
	)
	geoSessions = append(geoSessions, respSession{name: "geo getkeys", in: mb("COMMAND", "GETKEYSANDFLAGS", "georadius", "k", "1", "1", "1", "km", "STORE", "d") +
		mb("COMMAND", "GETKEYSANDFLAGS", "georadius", "k", "1", "1", "1", "km", "STORE", "d", "STOREDIST", "e") +
		mb("COMMAND", "GETKEYSANDFLAGS", "georadius", "k", "1", "1", "1", "km", "STOREDIST", "e", "COUNT", "3") +
		mb("COMMAND", "GETKEYSANDFLAGS", "georadiusbymember", "k", "m", "1", "km", "STORE", "d") + mb("COMMAND", "GETKEYS", "georadius", "k", "1", "1", "1", "km") +
		mb("COMMAND", "GETKEYS", "georadius", "k", "1", "1", "1", "km", "STORE") + mb("COMMAND", "GETKEYSANDFLAGS", "geosearchstore", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km") +
		mb("COMMAND", "GETKEYS", "geoadd", "k", "1", "1", "m") + mb("COMMAND", "GETKEYS", "geosearch", "k", "FROMMEMBER", "m", "BYRADIUS", "1", "km") +
		mb("COMMAND", "INFO", "geoadd", "georadius", "geosearchstore") + mb("COMMAND", "DOCS", "geosearch", "georadius_ro")})
}

// TestGeoClusterDifferential checks the geo commands' keys in cluster
// mode against a one-node redis-server cluster: a destination in another
// slot than the source is -CROSSSLOT, found as Redis's key specs find it
// (the first STORE and the first STOREDIST from the options on).
func TestGeoClusterDifferential(t *testing.T) {
	redisAddr := startRedisServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	rc := dialRESP(t, redisAddr)
	rc.Expect(multibulk("CLUSTER", "ADDSLOTSRANGE", "0", "16383"), "+OK\r\n")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(rc.Do("CLUSTER", "INFO"), "cluster_state:ok"); {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server never reached cluster_state:ok: %q", rc.Do("CLUSTER", "INFO"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	nodes, _ := startCluster(t, server.Config{}, "0-16383")
	mc := dialRESP(t, nodes[0].addr)
	sessions := [][]string{
		{"GEOADD", "{g}a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
		{"GEORADIUS", "{g}a", "15", "37", "200", "km", "STORE", "{g}d"}, {"GEORADIUS", "{g}a", "15", "37", "200", "km", "STORE", "other"},
		{"GEORADIUS", "{g}a", "15", "37", "200", "km", "STOREDIST", "other"}, {"GEORADIUS", "{g}a", "15", "37", "200", "km", "STORE", "{g}d", "STOREDIST", "x"},
		{"GEORADIUS", "{g}a", "15", "37", "200", "km", "STORE"}, {"GEORADIUS_RO", "{g}a", "15", "37", "200", "km", "STORE", "other"},
		{"GEORADIUSBYMEMBER", "{g}a", "Palermo", "200", "km", "STORE", "other"}, {"GEORADIUSBYMEMBER", "{g}a", "Palermo", "200", "km", "STOREDIST", "{g}e"},
		{"GEOSEARCHSTORE", "other", "{g}a", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"},
		{"GEOSEARCHSTORE", "{g}f", "{g}a", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "STOREDIST"},
		{"ZRANGE", "{g}f", "0", "-1"}, {"GEOPOS", "{g}a", "Palermo"}, {"GEODIST", "{g}a", "Palermo", "Catania"},
	}
	for _, args := range sessions {
		if want, got := rc.Do(args...), mc.Do(args...); got != want {
			t.Errorf("%q: MiniKV %q, redis-server %q", args, got, want)
		}
	}
}

// TestGeoRedisReplica: a redis-server replica of MiniKV receives the geo
// writes (GEOADD, the STORE forms) as the sorted set changes they are,
// and answers the geo reads on them as MiniKV does.
func TestGeoRedisReplica(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	_, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	c.Do("GEOADD", "{r}a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "the replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	c.Do("GEOADD", "{r}a", "12.5", "41.9", "Rome", "-122.27652", "37.805186", "Oakland")
	c.Do("GEORADIUS", "{r}a", "15", "37", "1000", "km", "STORE", "{r}s")
	c.Do("GEOSEARCHSTORE", "{r}d", "{r}a", "FROMMEMBER", "Rome", "BYRADIUS", "800", "km", "STOREDIST")
	c.Do("GEORADIUSBYMEMBER", "{r}a", "Rome", "1", "m", "STORE", "{r}s2")
	waitFor(t, "the replica to catch up", func() bool {
		off := infoField(t, rs.respAddr, "replication", "master_repl_offset")
		return off != "0" && infoField(t, replica, "replication", "slave_repl_offset") == off
	})
	sameKeys(t, rs.respAddr, replica, []string{"{r}a", "{r}s", "{r}d", "{r}s2"})
	rc := dialRESP(t, replica)
	for _, args := range [][]string{{"GEOPOS", "{r}a", "Palermo", "Oakland"}, {"GEOHASH", "{r}a", "Rome"},
		{"GEOSEARCH", "{r}a", "FROMLONLAT", "15", "37", "BYBOX", "2000", "2000", "km", "WITHDIST", "WITHCOORD", "ASC"}} {
		if want, got := rc.Do(args...), c.Do(args...); got != want {
			t.Errorf("%q: MiniKV %q, its Redis replica %q", args, got, want)
		}
	}
}

// TestGeoDurableRestart: in durable mode the geo writes (GEOADD, the
// STORE forms) are sorted set changes the log keeps, and after a restart
// the geo reads answer as before it.
func TestGeoDurableRestart(t *testing.T) {
	mem := vfs.NewMem()
	reads := [][]string{{"GEOPOS", "a", "Palermo", "Rome"}, {"GEOSEARCH", "a", "FROMMEMBER", "Rome", "BYRADIUS", "900", "km", "WITHDIST", "WITHHASH"},
		{"ZRANGE", "s", "0", "-1", "WITHSCORES"}, {"ZRANGE", "d", "0", "-1", "WITHSCORES"}, {"GEODIST", "a", "Palermo", "Catania", "km"}}
	var before []string
	for life := range 2 {
		t.Run(fmt.Sprint("life", life), func(t *testing.T) {
			_, _, addr := startDurableOnMem(t, mem)
			c := dialRESP(t, addr)
			if life == 0 {
				c.Do("GEOADD", "a", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "12.5", "41.9", "Rome")
				c.Do("GEORADIUS", "a", "15", "37", "1000", "km", "STORE", "s")
				c.Do("GEOSEARCHSTORE", "d", "a", "FROMMEMBER", "Rome", "BYRADIUS", "800", "km", "STOREDIST")
				for _, r := range reads {
					before = append(before, c.Do(r...))
				}
				if !strings.Contains(before[1], "Palermo") || !strings.HasPrefix(before[3], "*6\r\n") {
					t.Fatalf("the writes did not land: %q", before)
				}
				return
			}
			for i, r := range reads {
				if got := c.Do(r...); got != before[i] {
					t.Errorf("%q after the restart: %q, before it %q", r, got, before[i])
				}
			}
		})
	}
}

// TestGeoMiniKVFollowsRedis: MiniKV replicating a redis-server applies
// the geo writes of Redis's stream (GEOADD comes as ZADD; GEORADIUS ...
// STORE, GEORADIUSBYMEMBER ... STOREDIST and GEOSEARCHSTORE come as
// themselves) and ends with the same keys.
func TestGeoMiniKVFollowsRedis(t *testing.T) {
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	p := dialRESP(t, primary)
	p.Do("GEOADD", "a", "13.361389", "38.115556", "Palermo")
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	host, port, _ := net.SplitHostPort(primary)
	if got := c.Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	waitFor(t, "the link to the primary", func() bool { return infoField(t, rs.respAddr, "replication", "master_link_status") == "up" })
	p.Do("GEOADD", "a", "15.087269", "37.502669", "Catania", "12.5", "41.9", "Rome")
	p.Do("GEORADIUS", "a", "15", "37", "1000", "km", "STORE", "s")
	p.Do("GEORADIUSBYMEMBER", "a", "Rome", "800", "km", "STOREDIST", "t", "DESC", "COUNT", "2")
	p.Do("GEOSEARCHSTORE", "d", "a", "FROMMEMBER", "Rome", "BYBOX", "2000", "2000", "km", "STOREDIST")
	p.Do("GEOSEARCHSTORE", "e", "a", "FROMMEMBER", "Rome", "BYRADIUS", "1", "m")
	waitFor(t, "MiniKV to catch up", func() bool {
		off := infoField(t, primary, "replication", "master_repl_offset")
		return infoField(t, rs.respAddr, "replication", "slave_repl_offset") == off
	})
	sameKeys(t, primary, rs.respAddr, []string{"a", "s", "t", "d", "e"})
	if got := c.Do("ZCARD", "d"); got != ":3\r\n" {
		t.Errorf("ZCARD d on MiniKV = %q, want 3", got)
	}
}
