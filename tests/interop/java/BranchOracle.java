/*
 * Java Paimon's branch calls (FileStoreTable.createBranch, deleteBranch, renameBranch,
 * fastForward, branchManager().branches()), as its create_branch, delete_branch, rename_branch
 * and fast_forward procedures make them, for tests/interop/test_branches_java.py through
 * tests/interop/branch_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Static entry points taking strings and answering strings, as PaimonOracle's. */
public final class BranchOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private BranchOracle() {}

    private static FileStoreTable table(Catalog catalog, String db, String name)
            throws Exception {
        return (FileStoreTable) catalog.getTable(Identifier.create(db, name));
    }

    /** An empty branch when tag is empty, else one from the tag (CreateBranchProcedure). */
    public static void createBranch(
            String warehouse, String db, String name, String branch, String tag)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            if (tag.isEmpty()) {
                table.createBranch(branch, false);
            } else {
                table.createBranch(branch, tag, false);
            }
        }
    }

    /** Comma-separated names, as DeleteBranchProcedure passes them. */
    public static void deleteBranches(String warehouse, String db, String name, String branches)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            table(catalog, db, name).deleteBranches(branches);
        }
    }

    public static void renameBranch(
            String warehouse, String db, String name, String from, String to) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            table(catalog, db, name).renameBranch(from, to);
        }
    }

    public static void fastForward(String warehouse, String db, String name, String branch)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            table(catalog, db, name).fastForward(branch);
        }
    }

    /** The branch names, sorted, as JSON. */
    public static String branches(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            List<String> names = new ArrayList<>(table(catalog, db, name).branchManager().branches());
            Collections.sort(names);
            return MAPPER.writeValueAsString(names);
        }
    }

    /** The tag names of the table (or branch, as db.t$branch_b), sorted, as JSON. */
    public static String tags(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            List<String> names = new ArrayList<>(table(catalog, db, name).tagManager().allTagNames());
            Collections.sort(names);
            return MAPPER.writeValueAsString(names);
        }
    }
}
