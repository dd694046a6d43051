// Command codec is the bundled tool package of the encodings: the hash,
// base64 and url services, the server engines of the browser-only tools of
// the same names (ADR-027). It is built with
//
//	go generate ./plugins-src/codec
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/codec.wasm ./plugins-src/codec
//
// (make wasm); go generate writes guest_gen.go, the declaration guestgen
// derives from the guest.Register call below.
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
			bundled.Service("hash", "dev", hashTexts, bundled.Operations("digest"), computeHash),
			bundled.Service("base64", "encoding", base64Texts, bundled.Operations("encode", "decode"), computeBase64),
			bundled.Service("url", "encoding", urlTexts, bundled.Operations("encode", "decode"), computeURL),
		},
	})
}

func main() {}

var hashTexts = map[string]guest.Text{
	"en": {Name: "Hash", Description: "Digest text with MD5, SHA-1, SHA-256 or SHA-512, optionally as an HMAC."},
	"it": {Name: "Impronta hash", Description: "Calcola l'impronta del testo con MD5, SHA-1, SHA-256 o SHA-512, anche come HMAC."},
	"fr": {Name: "Hachage", Description: "Calculer l'empreinte d'un texte avec MD5, SHA-1, SHA-256 ou SHA-512, éventuellement en HMAC."},
	"es": {Name: "Función hash", Description: "Calcula el hash de un texto con MD5, SHA-1, SHA-256 o SHA-512, opcionalmente como HMAC."},
}

var base64Texts = map[string]guest.Text{
	"en": {Name: "Base64", Description: "Encode text to Base64 or decode Base64 to text, with the standard or the URL-safe alphabet."},
	"it": {Name: "Base64", Description: "Codifica il testo in Base64 o decodifica Base64 in testo, con l'alfabeto standard o quello sicuro per gli URL."},
	"fr": {Name: "Base64", Description: "Encoder du texte en Base64 ou décoder du Base64 en texte, avec l'alphabet standard ou celui adapté aux URL."},
	"es": {Name: "Base64", Description: "Codifica texto en Base64 o decodifica Base64 a texto, con el alfabeto estándar o el seguro para URL."},
}

var urlTexts = map[string]guest.Text{
	"en": {Name: "URL encoder", Description: "Percent-encode text for a URL query or path, or decode it."},
	"it": {Name: "Codificatore URL", Description: "Codifica il testo con la percent-encoding per la query o il percorso di un URL, o lo decodifica."},
	"fr": {Name: "Encodeur d'URL", Description: "Encoder un texte en pourcentage pour la requête ou le chemin d'une URL, ou le décoder."},
	"es": {Name: "Codificador de URL", Description: "Codifica texto con codificación porcentual para la consulta o la ruta de una URL, o lo decodifica."},
}

// textOutput is the result of a transform from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The encoded or decoded text."`
}
