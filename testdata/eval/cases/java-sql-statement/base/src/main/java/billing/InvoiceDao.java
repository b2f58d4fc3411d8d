package billing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

public class InvoiceDao {
    private final Connection conn;

    public InvoiceDao(Connection conn) {
        this.conn = conn;
    }

    public Invoice byId(long id) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT id, ref, total FROM invoices WHERE id = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Invoice(rs.getLong(1), rs.getString(2), rs.getLong(3)) : null;
            }
        }
    }
}
