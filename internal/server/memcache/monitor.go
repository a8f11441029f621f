package memcache

import "bytes"

// MONITOR on the memcached port: a Redis client running MONITOR sees the
// memcached commands too, each as the words of its command line
// ("set" "k" "0" "0" "1"; a data block is not shown), with auth's token
// redacted as Redis redacts AUTH's password. Serve keeps the line only
// while a monitor exists (the reader's KeepLine), so without one it costs
// one atomic load per command.

// feedMonitors shows the command just served to the monitors.
func (c *conn) feedMonitors() {
	words := bytes.Fields(c.r.Line())
	if len(words) == 0 {
		return
	}
	if string(words[0]) == "auth" {
		for i := 1; i < len(words); i++ {
			words[i] = []byte("(redacted)")
		}
	}
	c.FeedMonitors(words)
}
