package redis

// MONITOR on the RESP port (the feed itself is the server core's,
// server.Conn.FeedMonitors, which the memcached port feeds too). As in
// Redis 7.0: a command is shown after it ran, unless it has the admin or
// skip_monitor flag or was refused before running; AUTH and HELLO
// passwords are redacted; a monitor may still run commands that do not
// touch the keyspace (PING, INFO, ...), and RESET or QUIT end it.

func monitorCommand() respCommand {
	return respCommand{name: "monitor", arity: 1, group: "server", since: "1.0.0", complexity: "",
		summary: "Listens for all requests received by the server in real-time.", run: cmdMonitor}
}

func cmdMonitor(rc *conn, _ [][]byte) {
	if rc.inExec() {
		// Redis refuses it to a client that must get one reply per
		// command, as a transaction's must.
		rc.w.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if rc.monitor {
		return // Redis answers nothing to a second MONITOR
	}
	// The +OK goes into the Outbox as the connection joins the monitors,
	// under their lock: no monitor line can come before it, and a client
	// that has read it is a monitor already (CLIENT LIST says O, and the
	// next command anyone runs is shown).
	rc.StartOutbox()
	rc.SetCommand(&rc.running.name) // CLIENT LIST's cmd, before the +OK can be read
	rc.monitor = true
	rc.publish() // CLIENT LIST's O, before the +OK can be read
	rc.StartMonitorAfter(func() {
		rc.w.OK()
		_ = rc.w.Flush()
	})
}

// stopMonitor ends MONITOR (RESET, or the connection's end).
func (rc *conn) stopMonitor() {
	if rc.monitor {
		rc.monitor = false
		rc.StopMonitor()
	}
}

// feedMonitors shows a command that ran to the monitors.
func (rc *conn) feedMonitors(argv [][]byte) { rc.FeedMonitorsIn(rc.db, redactedArgs(argv)) }
