/**
 * Renames every UUID by its order of first appearance across the texts (`id-1`, `id-2`, …): random ids, compared by
 * where they recur, so that two runs (or two engines) that make different ids can be held to the same bytes.
 */
export function renameIds(texts: string[]): string[] {

    const names = new Map<string, string>();
    const rename = (id: string): string => {

        const name = names.get(id) ?? `id-${names.size + 1}`;
        names.set(id, name);
        return name;
    };

    return texts.map((text) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, rename));
}
