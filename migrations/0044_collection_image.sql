-- A collection's image (issue 23 item 3; docs/collections.md): what a page needs of it, as theme images hold it
-- (shared/storefront/theme.ts themeImageSchema): the content hash naming its files in R2 under the store's
-- prefix (<store_id>/<hash>/<width>.webp|jpg, made by the product-media pipeline), the original's size, the
-- widths made and its alt text. One optional image per collection, so a column, not a table: it is read with
-- the collection's own row by the pages that show it (no join, no round trip) and its writes bump the catalogue
-- version through the collection's existing trigger (migration 0042).
alter table collection add column image jsonb check (
  image is null or (
    jsonb_typeof(image) = 'object'
    and image->>'hash' ~ '^[0-9a-f]{64}$'
    and jsonb_typeof(image->'width') = 'number' and jsonb_typeof(image->'height') = 'number'
    and jsonb_typeof(image->'widths') = 'array' and jsonb_array_length(image->'widths') between 1 and 6
    and jsonb_typeof(image->'alt') = 'string'
  )
);
