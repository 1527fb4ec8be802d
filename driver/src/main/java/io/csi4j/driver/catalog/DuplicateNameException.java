package io.csi4j.driver.catalog;


/**
 * Another object of the same kind already has this name. Carries the existing object's id so the
 * domain can apply CSI idempotency (compatible arguments: return it; otherwise EXISTS).
 */
public final class DuplicateNameException extends CatalogException {
    private final String kind;
    private final String name;
    private final String existingId;

    public DuplicateNameException(String kind, String name, String existingId) {
        super(Reason.EXISTS, kind + " named '" + name + "' already exists with id " + existingId, null);
        this.kind = kind;
        this.name = name;
        this.existingId = existingId;
    }

    public String kind() { return kind; }
    public String name() { return name; }
    public String existingId() { return existingId; }
}
