// The Go peer of formdata-bench's stream workload: a multipart form with one field and one
// part of unknown length — BYTES generated in 64 KiB chunks, written through io.Pipe by
// mime/multipart in a goroutine while net/http sends it (chunked) to a loopback receiver.
//
//	go-stream BYTES URL
package main

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-stream BYTES URL")
		os.Exit(2)
	}
	total, err := strconv.ParseInt(os.Args[1], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	reader, writer := io.Pipe()
	form := multipart.NewWriter(writer)
	go func() {
		chunk := make([]byte, 64<<10)
		for i := range chunk {
			chunk[i] = byte('s')
		}
		err := form.WriteField("name", "a streamed part")
		var part io.Writer
		if err == nil {
			part, err = form.CreateFormFile("file", "stream.bin")
		}
		for left := total; err == nil && left > 0; {
			n := int64(len(chunk))
			if left < n {
				n = left
			}
			_, err = part.Write(chunk[:n])
			left -= n
		}
		if err == nil {
			err = form.Close()
		}
		writer.CloseWithError(err)
	}()
	response, err := http.Post(os.Args[2], form.FormDataContentType(), reader)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	io.Copy(io.Discard, response.Body)
	response.Body.Close()
	if response.StatusCode != 200 {
		fmt.Fprintln(os.Stderr, "status", response.StatusCode)
		os.Exit(1)
	}
}
