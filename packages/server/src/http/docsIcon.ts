/** The API reference's icon (an inline SVG, so /docs asks for no favicon that is not there). */
export const DOCS_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
<rect width="64" height="64" rx="14" fill="#0f5c8c"/>
<path d="M20 16h24v7H28v6h14v7H28v5h16v7H20z" fill="#fff"/>
</svg>
`;
