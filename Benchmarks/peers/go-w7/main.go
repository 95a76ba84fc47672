// The Go peer of formdata-bench's W7 (small forms): three fields and a file part built with
// mime/multipart and sent with net/http's client to a loopback receiver, one at a time on a
// kept-alive connection or IN_FLIGHT at once. Each request reads the file and builds its body
// afresh, as FormDataKit does.
//
//	go-w7 sequential|parallel COUNT IN_FLIGHT URL FILE
package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

func send(client *http.Client, url, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	form := multipart.NewWriter(&body)
	for _, field := range [][2]string{{"name", "a small form"}, {"note", "three fields and a file"}, {"index", "7"}} {
		if err := form.WriteField(field[0], field[1]); err != nil {
			return err
		}
	}
	part, err := form.CreateFormFile("file", filepath.Base(file))
	if err != nil {
		return err
	}
	if _, err := part.Write(data); err != nil {
		return err
	}
	if err := form.Close(); err != nil {
		return err
	}
	request, err := http.NewRequest("POST", url, &body)
	if err != nil {
		return err
	}
	request.Header.Set("Content-Type", form.FormDataContentType())
	response, err := client.Do(request)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, response.Body)
	response.Body.Close()
	if response.StatusCode != 200 {
		return fmt.Errorf("status %d", response.StatusCode)
	}
	return nil
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: go-w7 sequential|parallel COUNT IN_FLIGHT URL FILE")
		os.Exit(2)
	}
	count, _ := strconv.Atoi(os.Args[2])
	inFlight, _ := strconv.Atoi(os.Args[3])
	url, file := os.Args[4], os.Args[5]
	if os.Args[1] == "sequential" {
		inFlight = 1
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: inFlight, MaxIdleConnsPerHost: inFlight}}
	jobs := make(chan int, count)
	for index := 0; index < count; index++ {
		jobs <- index
	}
	close(jobs)
	var failures sync.Map
	var workers sync.WaitGroup
	for worker := 0; worker < inFlight; worker++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for index := range jobs {
				if err := send(client, url, file); err != nil {
					failures.Store(index, err)
				}
			}
		}()
	}
	workers.Wait()
	failed := 0
	failures.Range(func(key, value any) bool {
		if failed == 0 {
			fmt.Fprintln(os.Stderr, "go-w7:", value)
		}
		failed++
		return true
	})
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "go-w7: %d of %d failed\n", failed, count)
		os.Exit(1)
	}
}
