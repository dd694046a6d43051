// Command dataformat is the bundled tool package of the data formats:
// conversions between JSON and YAML, TOML and CSV, XML formatting, JSONPath
// queries, JSON diffs and query strings — the server engines of the
// browser-only tools of the same names (ADR-027, issue 19). It is built
// with
//
//	go generate ./plugins-src/dataformat
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/dataformat.wasm ./plugins-src/dataformat
//
// (make wasm); go generate writes guest_gen.go, the declaration guestgen
// derives from the guest.Register call below. Markdown and HTML to text
// are in plugins-src/markdown, so that this module does not carry
// goldmark.
package main

//go:generate go run github.com/toolhost/toolhost/guest/cmd/guestgen

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

func init() {
	guest.Register(guest.Package{
		ContractVersion:       bundled.ContractVersion,
		ImplementationVersion: bundled.ImplementationVersion,
		Services: []guest.Declaration{
			bundled.Service("yaml_json", "dev", yamlTexts, bundled.Operations("yaml_to_json", "json_to_yaml"), computeYAML),
			bundled.Service("toml_json", "dev", tomlTexts, bundled.Operations("toml_to_json", "json_to_toml"), computeTOML),
			bundled.Service("csv_json", "dev", csvTexts, bundled.Operations("csv_to_json", "json_to_csv"), computeCSV),
			bundled.Service("query_string", "encoding", queryTexts, bundled.Operations("parse", "build"), computeQuery),
			bundled.Service("xml", "dev", xmlTexts, bundled.Operations("format", "minify"), computeXML),
			bundled.Service("json_diff", "dev", diffTexts, bundled.Operations("diff"), computeDiff),
			bundled.Service("json_query", "dev", jsonQueryTexts, bundled.Operations("query"), computeJSONQuery),
		},
	})
}

func main() {}

var yamlTexts = map[string]guest.Text{
	"en": {Name: "YAML ⇄ JSON", Description: "Convert YAML to JSON, anchors and merge keys expanded, or JSON to YAML, keeping the order of keys."},
	"it": {Name: "YAML ⇄ JSON", Description: "Converte YAML in JSON, con ancore e chiavi di unione espanse, o JSON in YAML, mantenendo l'ordine delle chiavi."},
	"fr": {Name: "YAML ⇄ JSON", Description: "Convertir du YAML en JSON, ancres et clés de fusion développées, ou du JSON en YAML, en gardant l'ordre des clés."},
	"es": {Name: "YAML ⇄ JSON", Description: "Convierte YAML en JSON, con anclas y claves de fusión expandidas, o JSON en YAML, conservando el orden de las claves."},
}

var tomlTexts = map[string]guest.Text{
	"en": {Name: "TOML ⇄ JSON", Description: "Convert a TOML document to JSON, or a JSON object to TOML, keeping the order of keys."},
	"it": {Name: "TOML ⇄ JSON", Description: "Converte un documento TOML in JSON, o un oggetto JSON in TOML, mantenendo l'ordine delle chiavi."},
	"fr": {Name: "TOML ⇄ JSON", Description: "Convertir un document TOML en JSON, ou un objet JSON en TOML, en gardant l'ordre des clés."},
	"es": {Name: "TOML ⇄ JSON", Description: "Convierte un documento TOML en JSON, o un objeto JSON en TOML, conservando el orden de las claves."},
}

var csvTexts = map[string]guest.Text{
	"en": {Name: "CSV ⇄ JSON", Description: "Convert CSV to a JSON array, or a JSON array of objects or arrays to CSV, with a choice of delimiter, header row and quoting."},
	"it": {Name: "CSV ⇄ JSON", Description: "Converte CSV in un array JSON, o un array JSON di oggetti o di array in CSV, scegliendo separatore, riga d'intestazione e virgolette."},
	"fr": {Name: "CSV ⇄ JSON", Description: "Convertir du CSV en tableau JSON, ou un tableau JSON d'objets ou de tableaux en CSV, au choix du séparateur, de la ligne d'en-tête et des guillemets."},
	"es": {Name: "CSV ⇄ JSON", Description: "Convierte CSV en un array JSON, o un array JSON de objetos o de arrays en CSV, eligiendo el separador, la fila de encabezado y las comillas."},
}

var queryTexts = map[string]guest.Text{
	"en": {Name: "Query string", Description: "Parse a URL query string into its name and value pairs, in order, or build one from pairs."},
	"it": {Name: "Stringa di query", Description: "Scompone la stringa di query di un URL nelle sue coppie nome e valore, in ordine, o ne costruisce una dalle coppie."},
	"fr": {Name: "Chaîne de requête", Description: "Décomposer la chaîne de requête d'une URL en ses paires nom et valeur, dans l'ordre, ou en construire une à partir de paires."},
	"es": {Name: "Cadena de consulta", Description: "Descompone la cadena de consulta de una URL en sus pares de nombre y valor, en orden, o construye una a partir de pares."},
}

var xmlTexts = map[string]guest.Text{
	"en": {Name: "XML formatter", Description: "Format XML with one element a line, or minify it; the text inside elements is kept as it is."},
	"it": {Name: "Formattatore XML", Description: "Formatta l'XML con un elemento per riga, o lo minifica; il testo dentro gli elementi resta com'è."},
	"fr": {Name: "Formateur XML", Description: "Formater du XML avec un élément par ligne, ou le minifier ; le texte dans les éléments est conservé tel quel."},
	"es": {Name: "Formateador XML", Description: "Formatea XML con un elemento por línea, o lo minifica; el texto dentro de los elementos se conserva tal cual."},
}

var diffTexts = map[string]guest.Text{
	"en": {Name: "JSON diff", Description: "Compare two JSON documents and get their differences as a JSON Patch (RFC 6902)."},
	"it": {Name: "Differenze JSON", Description: "Confronta due documenti JSON e ne restituisce le differenze come JSON Patch (RFC 6902)."},
	"fr": {Name: "Différences JSON", Description: "Comparer deux documents JSON et obtenir leurs différences sous forme de JSON Patch (RFC 6902)."},
	"es": {Name: "Diferencias JSON", Description: "Compara dos documentos JSON y devuelve sus diferencias como un JSON Patch (RFC 6902)."},
}

var jsonQueryTexts = map[string]guest.Text{
	"en": {Name: "JSONPath query", Description: "Select values from a JSON document with a JSONPath query (RFC 9535), with the path of each."},
	"it": {Name: "Query JSONPath", Description: "Seleziona valori da un documento JSON con una query JSONPath (RFC 9535), con il percorso di ciascuno."},
	"fr": {Name: "Requête JSONPath", Description: "Sélectionner des valeurs d'un document JSON avec une requête JSONPath (RFC 9535), avec le chemin de chacune."},
	"es": {Name: "Consulta JSONPath", Description: "Selecciona valores de un documento JSON con una consulta JSONPath (RFC 9535), con la ruta de cada uno."},
}

// textOutput is the result of a conversion from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The converted text."`
}
