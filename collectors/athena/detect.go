package athena

import "bytes"

// headStart returns head without leading white space and byte order mark.
func headStart(head []byte) []byte {
	head = bytes.TrimPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte{0xEF, 0xBB, 0xBF})
	return bytes.TrimLeft(head, " \t\r\n")
}
