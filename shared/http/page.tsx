import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import { BASE_CSS } from "./html";

/** The page shell shared by admin and storefront pages. */
export const Page: FC<{ title: string; children?: Child }> = ({ title, children }) => (
  <>
  {raw("<!doctype html>")}
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width,initial-scale=1" />
      <title>{title}</title>
      <style dangerouslySetInnerHTML={{ __html: BASE_CSS }} />
    </head>
    <body>
      <main>{children}</main>
    </body>
  </html>
  </>
);
