import { extractText, getDocumentProxy } from "unpdf";

/** The text of a PDF answer, all pages merged (unpdf parses a copy: it detaches what it is given). */
export async function pdfText(res: Response): Promise<string> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  return (await extractText(await getDocumentProxy(bytes.slice()), { mergePages: true })).text;
}
