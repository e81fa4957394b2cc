/** A document's download name: its number with '/' as '-' (INV/25-26/000001 → INV-25-26-000001.pdf). */
export const documentFileName = (number: string): string => `${number.replaceAll("/", "-")}.pdf`;

/** A document's PDF as a download: application/pdf, saved under the document's number. */
export function pdfDownload(bytes: Uint8Array, number: string, headers: Record<string, string> = {}): Response {
  return new Response(new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength), {
    headers: { ...headers, "content-type": "application/pdf", "content-disposition": `attachment; filename="${documentFileName(number)}"` },
  });
}
