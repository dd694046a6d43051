// Command ident is the bundled tool package of the encodings and
// identifiers of issue 19: hex, base32, base58, hmac, checksum, uuid, jwt,
// number_base, unix_time, color, semver and ip_cidr, the server engines of
// the browser-only tools of the same names (ADR-027). It is built with
//
//	go generate ./plugins-src/ident
//	GOOS=wasip1 GOARCH=wasm go build -tags guestgen -buildmode=c-shared -o wasm/ident.wasm ./plugins-src/ident
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
			bundled.Service("hex", "encoding", hexTexts, bundled.Operations("encode", "decode"), computeHex),
			bundled.Service("base32", "encoding", base32Texts, bundled.Operations("encode", "decode"), computeBase32),
			bundled.Service("base58", "encoding", base58Texts, bundled.Operations("encode", "decode"), computeBase58),
			bundled.Service("hmac", "dev", hmacTexts, bundled.Operations("sign", "verify"), computeHMAC),
			bundled.Service("checksum", "dev", checksumTexts, bundled.Operations("compute"), computeChecksum),
			bundled.Service("uuid", "dev", uuidTexts, bundled.Operations("inspect", "v3", "v5"), computeUUID),
			bundled.Service("jwt", "dev", jwtTexts, bundled.Operations("decode", "verify"), computeJWT),
			bundled.Service("number_base", "dev", numberBaseTexts, bundled.Operations("convert"), computeNumberBase),
			bundled.Service("unix_time", "dev", unixTimeTexts, bundled.Operations("to_rfc3339", "from_rfc3339"), computeUnixTime),
			bundled.Service("color", "dev", colorTexts, bundled.Operations("convert"), computeColor),
			bundled.Service("semver", "dev", semverTexts, bundled.Operations("compare", "match"), computeSemver),
			bundled.Service("ip_cidr", "network", ipCIDRTexts, bundled.Operations("describe", "contains"), computeIPCIDR),
		},
	})
}

func main() {}

// textOutput is the result of a transform from text to text.
type textOutput struct {
	Text string `json:"text" doc:"The encoded or decoded text."`
}

var hexTexts = map[string]guest.Text{
	"en": {Name: "Hex encoder", Description: "Encode text to hexadecimal or decode hexadecimal to text."},
	"it": {Name: "Codificatore esadecimale", Description: "Codifica il testo in esadecimale o decodifica l'esadecimale in testo."},
	"fr": {Name: "Encodeur hexadécimal", Description: "Encoder du texte en hexadécimal ou décoder de l'hexadécimal en texte."},
	"es": {Name: "Codificador hexadecimal", Description: "Codifica texto en hexadecimal o decodifica hexadecimal a texto."},
}

var base32Texts = map[string]guest.Text{
	"en": {Name: "Base32", Description: "Encode text to Base32 or decode Base32 to text, with the standard or the extended hex alphabet (RFC 4648)."},
	"it": {Name: "Base32", Description: "Codifica il testo in Base32 o decodifica Base32 in testo, con l'alfabeto standard o quello esadecimale esteso (RFC 4648)."},
	"fr": {Name: "Base32", Description: "Encoder du texte en Base32 ou décoder du Base32 en texte, avec l'alphabet standard ou l'alphabet hexadécimal étendu (RFC 4648)."},
	"es": {Name: "Base32", Description: "Codifica texto en Base32 o decodifica Base32 a texto, con el alfabeto estándar o el hexadecimal extendido (RFC 4648)."},
}

var base58Texts = map[string]guest.Text{
	"en": {Name: "Base58", Description: "Encode text to Base58 with the Bitcoin alphabet, or decode it."},
	"it": {Name: "Base58", Description: "Codifica il testo in Base58 con l'alfabeto di Bitcoin, o lo decodifica."},
	"fr": {Name: "Base58", Description: "Encoder du texte en Base58 avec l'alphabet de Bitcoin, ou le décoder."},
	"es": {Name: "Base58", Description: "Codifica texto en Base58 con el alfabeto de Bitcoin, o lo decodifica."},
}

var hmacTexts = map[string]guest.Text{
	"en": {Name: "HMAC generator", Description: "Sign text with HMAC-SHA-1, HMAC-SHA-256 or HMAC-SHA-512, or verify a given HMAC."},
	"it": {Name: "Generatore HMAC", Description: "Firma il testo con HMAC-SHA-1, HMAC-SHA-256 o HMAC-SHA-512, o verifica un HMAC dato."},
	"fr": {Name: "Générateur HMAC", Description: "Signer un texte avec HMAC-SHA-1, HMAC-SHA-256 ou HMAC-SHA-512, ou vérifier un HMAC donné."},
	"es": {Name: "Generador HMAC", Description: "Firma texto con HMAC-SHA-1, HMAC-SHA-256 o HMAC-SHA-512, o verifica un HMAC dado."},
}

var checksumTexts = map[string]guest.Text{
	"en": {Name: "Checksum", Description: "Compute the CRC-32, CRC-32C or Adler-32 checksum of text."},
	"it": {Name: "Checksum", Description: "Calcola il checksum CRC-32, CRC-32C o Adler-32 del testo."},
	"fr": {Name: "Somme de contrôle", Description: "Calculer la somme de contrôle CRC-32, CRC-32C ou Adler-32 d'un texte."},
	"es": {Name: "Suma de verificación", Description: "Calcula la suma de verificación CRC-32, CRC-32C o Adler-32 de un texto."},
}

var numberBaseTexts = map[string]guest.Text{
	"en": {Name: "Number base converter", Description: "Convert an integer of any size between bases 2 and 36."},
	"it": {Name: "Convertitore di basi numeriche", Description: "Converte un intero di qualsiasi dimensione tra le basi da 2 a 36."},
	"fr": {Name: "Convertisseur de base numérique", Description: "Convertir un entier de toute taille entre les bases 2 à 36."},
	"es": {Name: "Conversor de bases numéricas", Description: "Convierte un entero de cualquier tamaño entre las bases 2 a 36."},
}

var unixTimeTexts = map[string]guest.Text{
	"en": {Name: "Unix timestamp converter", Description: "Convert a Unix timestamp to an RFC 3339 date-time at a fixed offset, or a date-time to a Unix timestamp."},
	"it": {Name: "Convertitore di timestamp Unix", Description: "Converte un timestamp Unix in una data e ora RFC 3339 con uno scostamento fisso, o una data e ora in timestamp Unix."},
	"fr": {Name: "Convertisseur d'horodatage Unix", Description: "Convertir un horodatage Unix en date et heure RFC 3339 à un décalage fixe, ou une date et heure en horodatage Unix."},
	"es": {Name: "Conversor de marcas de tiempo Unix", Description: "Convierte una marca de tiempo Unix en una fecha y hora RFC 3339 con un desfase fijo, o una fecha y hora en marca de tiempo Unix."},
}

var ipCIDRTexts = map[string]guest.Text{
	"en": {Name: "IP and CIDR calculator", Description: "Describe an IPv4 or IPv6 CIDR block (network, netmask, broadcast, host range, counts) or check whether it contains an address."},
	"it": {Name: "Calcolatore IP e CIDR", Description: "Descrive un blocco CIDR IPv4 o IPv6 (rete, maschera, broadcast, intervallo di host, conteggi) o verifica se contiene un indirizzo."},
	"fr": {Name: "Calculateur IP et CIDR", Description: "Décrire un bloc CIDR IPv4 ou IPv6 (réseau, masque, diffusion, plage d'hôtes, nombres) ou vérifier s'il contient une adresse."},
	"es": {Name: "Calculadora de IP y CIDR", Description: "Describe un bloque CIDR IPv4 o IPv6 (red, máscara, difusión, rango de hosts, recuentos) o comprueba si contiene una dirección."},
}

var uuidTexts = map[string]guest.Text{
	"en": {Name: "UUID inspector", Description: "Read a UUID's version, variant and time, or make a name-based UUID (version 3 or 5) from a namespace and a name."},
	"it": {Name: "Analizzatore di UUID", Description: "Legge versione, variante e istante di un UUID, o crea un UUID basato su nome (versione 3 o 5) da uno spazio dei nomi e un nome."},
	"fr": {Name: "Inspecteur d'UUID", Description: "Lire la version, la variante et l'instant d'un UUID, ou créer un UUID fondé sur un nom (version 3 ou 5) à partir d'un espace de noms et d'un nom."},
	"es": {Name: "Inspector de UUID", Description: "Lee la versión, la variante y el instante de un UUID, o crea un UUID basado en nombre (versión 3 o 5) a partir de un espacio de nombres y un nombre."},
}

var jwtTexts = map[string]guest.Text{
	"en": {Name: "JWT decoder", Description: "Decode a JSON Web Token's header and claims without trusting them, or verify its HS256 signature with a secret."},
	"it": {Name: "Decodificatore JWT", Description: "Decodifica intestazione e claim di un JSON Web Token senza fidarsene, o ne verifica la firma HS256 con un segreto."},
	"fr": {Name: "Décodeur JWT", Description: "Décoder l'en-tête et les revendications d'un JSON Web Token sans s'y fier, ou vérifier sa signature HS256 avec un secret."},
	"es": {Name: "Decodificador JWT", Description: "Decodifica la cabecera y las declaraciones de un JSON Web Token sin confiar en ellas, o verifica su firma HS256 con un secreto."},
}

var colorTexts = map[string]guest.Text{
	"en": {Name: "Color converter", Description: "Convert a CSS colour between hex, RGB, HSL and OKLCH."},
	"it": {Name: "Convertitore di colori", Description: "Converte un colore CSS tra esadecimale, RGB, HSL e OKLCH."},
	"fr": {Name: "Convertisseur de couleurs", Description: "Convertir une couleur CSS entre hexadécimal, RVB, TSL et OKLCH."},
	"es": {Name: "Conversor de colores", Description: "Convierte un color CSS entre hexadecimal, RGB, HSL y OKLCH."},
}

var semverTexts = map[string]guest.Text{
	"en": {Name: "Semantic version comparator", Description: "Compare two semantic versions, or check whether a version is in a range such as ^1.2 or >=1.0 <2."},
	"it": {Name: "Comparatore di versioni semantiche", Description: "Confronta due versioni semantiche, o verifica se una versione rientra in un intervallo come ^1.2 o >=1.0 <2."},
	"fr": {Name: "Comparateur de versions sémantiques", Description: "Comparer deux versions sémantiques, ou vérifier si une version appartient à une plage telle que ^1.2 ou >=1.0 <2."},
	"es": {Name: "Comparador de versiones semánticas", Description: "Compara dos versiones semánticas, o comprueba si una versión está en un rango como ^1.2 o >=1.0 <2."},
}
