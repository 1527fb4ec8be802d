package io.csi4j.driver.catalog;

import java.nio.file.Path;
import java.sql.SQLException;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/** Classifies SQLite failures by result code, and turns the ones nobody handled into catalog exceptions. */
final class SqlErrors {
    private SqlErrors() {}

    static int resultCode(SQLException e) {
        return e instanceof SQLiteException s ? s.getResultCode().code : e.getErrorCode();
    }

    static boolean isDamage(SQLException e) {
        int primary = resultCode(e) & 0xff;
        return primary == SQLiteErrorCode.SQLITE_CORRUPT.code || primary == SQLiteErrorCode.SQLITE_NOTADB.code;
    }

    static boolean isUniqueViolation(SQLException e) {
        int code = resultCode(e);
        return code == SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE.code
                || code == SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY.code;
    }

    static boolean isForeignKeyViolation(SQLException e) {
        return resultCode(e) == SQLiteErrorCode.SQLITE_CONSTRAINT_FOREIGNKEY.code;
    }

    static CatalogException translate(Path file, SQLException e) {
        if (isDamage(e)) return new CatalogDamagedException(file, e.getMessage(), e);
        return new CatalogException("catalog " + file + ": " + e.getMessage(), e);
    }
}
