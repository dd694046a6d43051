package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/bundledtest"
)

// BenchmarkLoad is the module's load on a cold compilation cache: wazero's
// compile, the pre-initialisation and describe; the text package's module
// beside it, a reference under the same machine load.
func BenchmarkLoad(b *testing.B) { bundledtest.BenchLoad(b, "dataformat", "text") }

// BenchmarkFreshItem is the whole per-item path — strict decoding, input
// validation, a fresh instance from the pre-initialised image, compute,
// output validation and encoding — for each service on about 1 KiB of
// input, as internal/wasmtool's BenchmarkFreshItem does for the first
// bundled tools.
func BenchmarkFreshItem(b *testing.B) {
	users := `[` + strings.Repeat(`{\"name\":\"Zoë\",\"age\":31,\"tags\":[\"a\",\"b\"]},`, 24) + `{}]`
	yamlDoc := strings.Repeat(`- name: Zoë\n  age: 31\n  tags: [a, b]\n`, 28)
	tomlDoc := strings.Repeat(`[[user]]\nname = \"Zoë\"\nage = 31\ntags = [\"a\", \"b\"]\n`, 22)
	csvDoc := `name,age,tags\n` + strings.Repeat(`Zoë,31,\"a,b\"\n`, 64)
	xmlDoc := `<users>` + strings.Repeat(`<user age=\"31\"><name>Zoë</name><tag>a</tag></user>`, 20) + `</users>`
	items := []bundledtest.BenchItem{
		{Name: "yaml_to_json", Code: "yaml_json", Params: `{"operation":"yaml_to_json","text":"` + yamlDoc + `"}`},
		{Name: "json_to_yaml", Code: "yaml_json", Params: `{"operation":"json_to_yaml","text":"` + users + `"}`},
		{Name: "toml_to_json", Code: "toml_json", Params: `{"operation":"toml_to_json","text":"` + tomlDoc + `"}`},
		{Name: "json_to_toml", Code: "toml_json", Params: `{"operation":"json_to_toml","text":"{\"user\":` + users + `}"}`},
		{Name: "csv_to_json", Code: "csv_json", Params: `{"operation":"csv_to_json","text":"` + csvDoc + `"}`},
		{Name: "json_to_csv", Code: "csv_json", Params: `{"operation":"json_to_csv","text":"` + users + `"}`},
		{Name: "xml_format", Code: "xml", Params: `{"operation":"format","text":"` + xmlDoc + `"}`},
		{Name: "json_diff", Code: "json_diff", Params: `{"operation":"diff","a":"` + users + `","b":"` + strings.Replace(users, "31", "32", 3) + `"}`},
		{Name: "json_query", Code: "json_query", Params: `{"operation":"query","text":"` + users + `","query":"$[?@.age > 30].name"}`},
		{Name: "query_string_parse", Code: "query_string", Params: `{"operation":"parse","text":"https://x.test/?` + strings.Repeat("q=caf%C3%A9+au+lait&tag=a&", 40) + `"}`},
	}
	bundledtest.BenchItems(b, "dataformat", items)
}
