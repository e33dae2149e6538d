package main

import (
	"encoding/json"
	"os"

	"fixture"
)

// writeJSON replaces file with v's JSON at once (write, then rename).
func writeJSON(file string, v interface{}) {
	data, err := json.Marshal(v)
	if err != nil {
		fixture.Fatal(err)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		fixture.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		fixture.Fatal(err)
	}
}
