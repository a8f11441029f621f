package main

import "net"

// serveGoroutines is MiniKV's model today: a goroutine per connection on
// Go's netpoller; read what is there, answer all of it, one write.
func serveGoroutines(ln net.Listener, serve serveFunc) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			in := make([]byte, 16<<10)
			out := make([]byte, 0, 16<<10)
			have := 0
			for {
				n, err := c.Read(in[have:])
				if err != nil {
					return
				}
				have += n
				done, o := serve(in[:have], out[:0])
				out = o
				have = copy(in, in[done:have])
				if len(out) > 0 {
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}
		}()
	}
}
