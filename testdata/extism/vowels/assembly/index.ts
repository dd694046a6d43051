// A plain Extism plugin written in AssemblyScript with the Extism AS PDK:
// it knows nothing of Toolhost. Its sidecar manifest (vowels.tool.json)
// declares it as the service "vowels" and maps the operation "count" to
// the export count_vowels.
import { Host } from "@extism/as-pdk";
import { JSON } from "assemblyscript-json/assembly";

function myAbort(message: string | null, fileName: string | null, lineNumber: u32, columnNumber: u32): void {}

export function count_vowels(): i32 {
  const doc = <JSON.Obj>JSON.parse(Host.inputString());
  const text = doc.getString("text");
  if (text == null) {
    Host.outputString('{"count":0}');
    return 0;
  }
  const s = text.valueOf();
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charAt(i).toLowerCase();
    if (c == "a" || c == "e" || c == "i" || c == "o" || c == "u") count++;
  }
  Host.outputString('{"count":' + count.toString() + "}");
  return 0;
}
