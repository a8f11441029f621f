package cluster

// KeySlot is the hash slot of key, as Redis's keyHashSlot (cluster.c)
// computes it: CRC16 (XMODEM) of the key modulo 16384, where a key that
// holds a '{' followed later by a '}' with at least one byte between them
// hashes only those bytes, the hash tag, so "{user1}.a" and "{user1}.b"
// share a slot. Only the first '{' counts, and the first '}' after it:
// "{}a" and "a{}{b}" hash whole, "{{a}}" hashes "{a".
func KeySlot(key []byte) int {
	for s := 0; s < len(key); s++ {
		if key[s] != '{' {
			continue
		}
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e > s+1 {
					key = key[s+1 : e]
				}
				break
			}
		}
		break
	}
	return int(crc16(key) & (Slots - 1))
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
// reflection), the CRC Redis Cluster hashes keys with (crc16.c).
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^c]
	}
	return crc
}

// crc16Table is the byte-at-a-time table of crc16, computed once.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
